import type { Observable, SchedulerLike } from "rxjs";
import { asyncScheduler, catchError, defer, from, fromEvent, map, merge, retry, take, throwError, timer } from "rxjs";
import type { LlmContext, Model, ModelErrorEvent, ModelEvent, ModelStreamOptions } from "../types/model.js";
import { FailedBeforeContent, failBeforeContent } from "./fail-before-content.js";
import { isTransientFailure } from "./transient-failure.js";

export interface RetryOptions {
  /** Further attempts after the first. Default 2. */
  retries?: number;
  /** Delay before the first retry, doubled for each next one. Default 500. */
  initialDelayMs?: number;
  /** Upper bound of the computed backoff. Default 8000. */
  maxDelayMs?: number;
  /**
   * A server's `Retry-After` longer than this is not waited for: the failure is reported instead.
   * Default 60000.
   */
  maxRetryAfterMs?: number;
  /** Which failures deserve another attempt. Default `isTransientFailure` (429, 5xx, resets). */
  retryOn?: (event: ModelErrorEvent) => boolean;
  /** Source of time for the waits. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Jitter source in [0, 1). Default `Math.random`. */
  random?: () => number;
}

/** The options `withRetry` uses when given none. */
const DEFAULT_RETRY_OPTIONS = { retries: 2, initialDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60_000 } as const;

class RetryWaitAborted extends Error {}

/**
 * The model, calling again after a transient failure, as long as no content has streamed.
 *
 * Intuition: a call that failed before its first token can be sent again; one that already
 * streamed text cannot, because the consumer has seen part of an answer.
 *
 * ```text
 * attempt 1:  s-e                 (429, Retry-After: 1)
 * attempt 2:              s-t-d|
 * result:     ----------- --(st)-d|
 *                ^ waits 1 s on `scheduler`
 * ```
 *
 * Contract: waits the failure's `retryAfterMs` when the provider reported one, otherwise
 * `initialDelayMs * 2^(n-1)` capped by `maxDelayMs` and scaled by a jitter factor in [0.5, 1).
 * Never retries after a content event, nor a failure `retryOn` rejects, nor an abort. When the
 * retries run out, the last failure ends the stream with "(gave up after N attempts)" appended
 * to its `errorMessage` (unchanged with `retries: 0`). An abort during a wait ends it at once with an `aborted` error event.
 * @example const model = withRetry(openaiChat({ model: "gpt-4.1-mini", maxRetries: 0 }), { retries: 3 })
 */
export function withRetry(model: Model, options: RetryOptions = {}): Model {
  const retries = options.retries ?? DEFAULT_RETRY_OPTIONS.retries;
  const initialDelayMs = options.initialDelayMs ?? DEFAULT_RETRY_OPTIONS.initialDelayMs;
  const maxDelayMs = options.maxDelayMs ?? DEFAULT_RETRY_OPTIONS.maxDelayMs;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_RETRY_OPTIONS.maxRetryAfterMs;
  const retryOn = options.retryOn ?? isTransientFailure;
  const scheduler = options.scheduler ?? asyncScheduler;
  const random = options.random ?? Math.random;

  const delayOf = (event: ModelErrorEvent, retryCount: number): number | undefined => {
    const requested = event.failure?.retryAfterMs;
    if (requested !== undefined) return requested > maxRetryAfterMs ? undefined : requested;
    return Math.round(Math.min(maxDelayMs, initialDelayMs * 2 ** (retryCount - 1)) * (0.5 + random() / 2));
  };

  return {
    id: model.id,
    provider: model.provider,
    api: model.api,
    stream(context: LlmContext, streamOptions: ModelStreamOptions): Observable<ModelEvent> {
      const { signal } = streamOptions;
      return defer(() => {
        let last: FailedBeforeContent | undefined;
        return defer(() => model.stream(context, streamOptions)).pipe(
          failBeforeContent((event) => !signal.aborted && retryOn(event)),
          retry({
            delay: (error: unknown, retryCount: number) => {
              if (!(error instanceof FailedBeforeContent)) return throwError(() => error);
              last = error;
              // With `retries: 0` nothing was retried, so there is nothing to give up on.
            if (retryCount > retries) return throwError(() => (retries === 0 ? error : new FailedBeforeContent(error.held, gaveUp(error.event, retryCount))));
              const delayMs = delayOf(error.event, retryCount);
              return delayMs === undefined ? throwError(() => error) : waitUnlessAborted(delayMs, scheduler, signal);
            },
          }),
          catchError((error: unknown) => {
            if (error instanceof FailedBeforeContent) return from([...error.held, error.event]);
            if (error instanceof RetryWaitAborted && last) return from([...last.held, aborted(last.event)]);
            return throwError(() => error);
          }),
        );
      });
    },
  };
}

function waitUnlessAborted(delayMs: number, scheduler: SchedulerLike, signal: AbortSignal): Observable<unknown> {
  if (signal.aborted) return throwError(() => new RetryWaitAborted());
  const abort = fromEvent(signal, "abort").pipe(
    map(() => {
      throw new RetryWaitAborted();
    }),
  );
  return merge(timer(delayMs, scheduler), abort).pipe(take(1));
}

function gaveUp(event: ModelErrorEvent, attempts: number): ModelErrorEvent {
  const errorMessage = `${event.error.errorMessage ?? "Model call failed"} (gave up after ${attempts} attempts)`;
  return { ...event, error: { ...event.error, errorMessage } };
}

function aborted(event: ModelErrorEvent): ModelErrorEvent {
  const { failure: _failure, ...rest } = event;
  return { ...rest, reason: "aborted", error: { ...event.error, stopReason: "aborted", errorMessage: "Request was aborted" } };
}
