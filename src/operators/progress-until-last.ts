import { Observable, type OperatorFunction, type SchedulerLike, type Subscription } from "rxjs";

/** A value that more followed (`progress`), or the source's completion with its last value (`last`). */
export type ProgressOrLast<T> = { readonly type: "progress"; readonly value: T } | { readonly type: "last"; readonly value: T | undefined; readonly hasValue: boolean };

/**
 * Tells progress from the result in an Observable of a tool's output: a value is progress only
 * if more follows.
 *
 * Emits `{ type: "progress", value }` for a value when the next value (or an error) arrives or
 * `scheduler` next gets a turn, and drops it when the source completes first; on completion emits
 * `{ type: "last", value, hasValue }` with the last value (reported or not), then completes. So
 * `of(result)` reports no progress, and a value that waited a scheduler turn is both progress and
 * the result. Errors pass through, after the progress held back.
 *
 * ```text
 * source:   -a--(bc)--d|    -(e|)
 * output:   -p--(qr)--s(t|) -(u|)    p: progress a, q: b, r: c, s: d, t: last d, u: last e
 * ```
 *
 * Why one scheduled flush per burst and not one per value: a burst of values makes and drops
 * no scheduled action per value.
 *
 * @example
 * toolOutput$.pipe(progressUntilLast(scheduler)).subscribe(...)
 */
export function progressUntilLast<T>(scheduler: SchedulerLike): OperatorFunction<T, ProgressOrLast<T>> {
  return (source) =>
    new Observable<ProgressOrLast<T>>((subscriber) => {
      let lastValue: T | undefined;
      let hasValue = false;
      // Whether `lastValue` is progress not reported yet.
      let unreported = false;
      let flush: Subscription | undefined;
      const reportUnreported = () => {
        if (!unreported) return;
        unreported = false;
        subscriber.next({ type: "progress", value: lastValue as T });
      };
      const subscription = source.subscribe({
        next: (value) => {
          reportUnreported();
          lastValue = value;
          hasValue = true;
          unreported = true;
          flush ??= scheduler.schedule(() => {
            flush = undefined;
            reportUnreported();
          });
        },
        error: (error: unknown) => {
          reportUnreported();
          subscriber.error(error);
        },
        complete: () => {
          unreported = false;
          subscriber.next({ type: "last", value: lastValue, hasValue });
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        flush?.unsubscribe();
      };
    });
}
