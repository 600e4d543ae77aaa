import { Observable } from "rxjs";
import { isAbortError, isConnectionFailure, RequestAbortedError, StreamInterruptedError } from "./provider-errors.js";

/**
 * The SDK's failure as the stream reports it. Why it catches: telling an abort or a lost
 * connection reads the error (`instanceof`, `code`, `cause`), and what a custom `fetch` or
 * client throws may throw as it is read (a revoked Proxy); here, in the Promise's handler, that
 * was an unhandled rejection, which ends a Node process. Such an error goes on as it is.
 */
function classified(error: unknown, signal: AbortSignal, chunks: number): unknown {
  try {
    if (signal.aborted || isAbortError(error)) return new RequestAbortedError();
    if (chunks > 0 && isConnectionFailure(error)) return new StreamInterruptedError(chunks, { cause: error });
    return error;
  } catch {
    return error;
  }
}

/**
 * Turns an SDK streaming call into a cold Observable of its chunks: the one place where a
 * Promise and an async iterable become an Observable.
 *
 * Each subscription gets its own AbortController, whose signal `start` must pass to the SDK.
 * Unsubscribing aborts it at once (as rxjs's `fromFetch` does), because an async iterator only
 * notices a `return()` when its next chunk arrives, which may be never.
 *
 * Contract: the request starts on subscribe. Errors are Observable errors here (the operators
 * downstream retry and convert them): an abort by `signal` becomes `RequestAbortedError`, a
 * connection lost after some chunks becomes `StreamInterruptedError`, anything else is passed
 * through as the SDK threw it.
 * @example fromSdkStream((signal) => client.chat.completions.create(body, { signal }), { signal })
 */
export function fromSdkStream<T>(
  start: (signal: AbortSignal) => PromiseLike<AsyncIterable<T>>,
  options: { signal?: AbortSignal } = {},
): Observable<T> {
  return new Observable<T>((subscriber) => {
    const external = options.signal;
    if (external?.aborted) {
      subscriber.error(new RequestAbortedError());
      return undefined;
    }
    const controller = new AbortController();
    const abort = (): void => controller.abort();
    external?.addEventListener("abort", abort, { once: true });
    let settled = false;
    let chunks = 0;

    const fail = (error: unknown): void => {
      settled = true;
      subscriber.error(classified(error, controller.signal, chunks));
    };

    const pump = async (): Promise<void> => {
      const iterable = await start(controller.signal);
      for await (const chunk of iterable) {
        if (subscriber.closed) return;
        chunks++;
        subscriber.next(chunk);
      }
      settled = true;
      // The SDK ends its iterator quietly when aborted; the caller must still hear about it.
      if (controller.signal.aborted) subscriber.error(new RequestAbortedError());
      else subscriber.complete();
    };
    pump().catch(fail);

    return () => {
      external?.removeEventListener("abort", abort);
      if (!settled) controller.abort();
    };
  });
}
