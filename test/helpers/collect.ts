import type { Observable } from "rxjs";

/** What a subscription heard: its values, then how it ended (an error stays an error, apart from the values). */
export interface Recorded<T> {
  values: T[];
  /** Present when the Observable errored, with what it errored with. */
  failure?: { error: unknown };
  completed: boolean;
}

/** Subscribes and records what the Observable emits synchronously, and how it ended. */
export function record<T>(source: Observable<T>): Recorded<T> {
  const recorded: Recorded<T> = { values: [], completed: false };
  source.subscribe({
    next: (value) => recorded.values.push(value),
    error: (error: unknown) => (recorded.failure = { error }),
    complete: () => (recorded.completed = true),
  });
  return recorded;
}

/**
 * The values an Observable emits synchronously. An error is thrown as it is, so the test fails
 * with it rather than seeing a made-up last value; tests that expect an error use `record`.
 */
export function collect<T>(source: Observable<T>): T[] {
  const { values, failure } = record(source);
  if (failure) throw failure.error;
  return values;
}
