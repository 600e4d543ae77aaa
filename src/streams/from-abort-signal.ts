import { NEVER, Observable } from "rxjs";

/**
 * Emits once, then completes, when the signal aborts; at once if it already has.
 *
 * Without a signal it never emits. The listener is removed on unsubscribe, so nothing is left
 * attached to a long-lived signal after a run.
 */
export function fromAbortSignal(signal: AbortSignal | undefined): Observable<void> {
  if (!signal) {
    return NEVER;
  }
  return new Observable<void>((subscriber) => {
    if (signal.aborted) {
      subscriber.next();
      subscriber.complete();
      return undefined;
    }
    const onAbort = () => {
      subscriber.next();
      subscriber.complete();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    return () => signal.removeEventListener("abort", onAbort);
  });
}
