import type { MonoTypeOperatorFunction, Observable, SchedulerLike } from "rxjs";
import { asyncScheduler, defer, fromEvent, merge, retry, take, tap, throwError, timer, mergeMap } from "rxjs";
import { isTransientError, RequestAbortedError, RetriesExhaustedError, retryAfterMs } from "./provider-errors.js";

export interface RetryTransientConfig {
  /** Further attempts after the first. Default 2. */
  maxRetries?: number;
  /** Delay before the first retry, doubled for each next one. Default 500. */
  baseDelayMs?: number;
  /** Upper bound of the computed backoff. Default 8000. */
  maxDelayMs?: number;
  /**
   * A server's `Retry-After` longer than this is not waited for: the error is reported instead.
   * Default 60000.
   */
  maxRetryAfterMs?: number;
  /** Source of time for the waits. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Jitter source in [0, 1). Default `Math.random`. */
  random?: () => number;
  /** Ends a pending wait with `RequestAbortedError`. */
  signal?: AbortSignal;
  /** Which errors deserve another attempt. Default `isTransientError`. */
  shouldRetry?: (error: unknown) => boolean;
}

/**
 * Resubscribes to the source after a transient failure, as long as it has not emitted yet.
 *
 * Intuition: a request that failed before its first chunk can be sent again; one that already
 * streamed to the consumer cannot, because the consumer has seen part of an answer.
 *
 * ```text
 * source (1st):  --#            (429, Retry-After: 1)
 * source (2nd):             --a--b--|
 * result:        -----------  --a--b--|
 *                   ^ waits 1s on `scheduler`
 * ```
 *
 * Contract: waits `retry-after-ms` / `Retry-After` when the server sent it, otherwise
 * `baseDelayMs * 2^(n-1)` capped by `maxDelayMs`, scaled by a jitter factor in [0.5, 1).
 * Never retries after the first value, nor errors `shouldRetry` rejects. When retries run out
 * the error is a `RetriesExhaustedError` naming the attempts.
 * @example fromSdkStream(start).pipe(retryTransient({ maxRetries: 3, scheduler }))
 */
export function retryTransient<T>(config: RetryTransientConfig = {}): MonoTypeOperatorFunction<T> {
  const maxRetries = config.maxRetries ?? 2;
  const baseDelayMs = config.baseDelayMs ?? 500;
  const maxDelayMs = config.maxDelayMs ?? 8000;
  const maxRetryAfterMs = config.maxRetryAfterMs ?? 60_000;
  const scheduler = config.scheduler ?? asyncScheduler;
  const random = config.random ?? Math.random;
  const shouldRetry = config.shouldRetry ?? isTransientError;

  return (source) =>
    defer(() => {
      let emitted = false;
      return source.pipe(
        tap(() => {
          emitted = true;
        }),
        retry({
          delay: (error: unknown, retryCount: number): Observable<unknown> => {
            if (emitted || !shouldRetry(error)) return throwError(() => error);
            if (retryCount > maxRetries) return throwError(() => new RetriesExhaustedError(retryCount, error));
            const requested = retryAfterMs(error, scheduler.now());
            if (requested !== undefined && requested > maxRetryAfterMs) return throwError(() => error);
            const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (retryCount - 1)) * (0.5 + random() / 2);
            return waitUnlessAborted(requested ?? Math.round(backoff), scheduler, config.signal);
          },
        }),
      );
    });
}

function waitUnlessAborted(delayMs: number, scheduler: SchedulerLike, signal: AbortSignal | undefined): Observable<unknown> {
  if (!signal) return timer(delayMs, scheduler);
  if (signal.aborted) return throwError(() => new RequestAbortedError());
  const aborted = fromEvent(signal, "abort").pipe(mergeMap(() => throwError(() => new RequestAbortedError())));
  return merge(timer(delayMs, scheduler), aborted).pipe(take(1));
}
