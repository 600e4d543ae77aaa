import type { Observable, SchedulerLike } from "rxjs";
import { asyncScheduler, catchError, defer, from, fromEvent, map, merge, retry, take, tap, throwError, timer } from "rxjs";
import type { AssistantMessage, Usage } from "../types/messages.js";
import type { LlmContext, Model, ModelErrorEvent, ModelEvent, ModelStreamOptions } from "../types/model.js";
import { errorMessageOf, FailedBeforeContent, failBeforeContent } from "./fail-before-content.js";
import { addUsage, hasUsage, spentBy } from "./run-usage.js";
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
 * Attempts sent again that had reported usage (tokens counted before the failure) leave their sum
 * as `retriedUsage` on the final message, so `runUsage` bills them.
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
    const failure: unknown = event.failure;
    // A provider's own hint, when it is a usable number of milliseconds.
    const requested: unknown = typeof failure === "object" && failure !== null ? (failure as { retryAfterMs?: unknown }).retryAfterMs : undefined;
    if (typeof requested === "number" && Number.isFinite(requested) && requested >= 0) return requested > maxRetryAfterMs ? undefined : requested;
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
        // What the attempts sent again had reported spending, when any: on the final message (`retriedUsage`).
        let retried: Usage | undefined;
        const attempt = () => {
          // Judged before it is marked, so a failure handed back holds only what its own attempt spent.
          const events = model.stream(context, streamOptions).pipe(failBeforeContent((event) => !signal.aborted && retryOn(event)));
          // Only after an attempt that reported usage: every other call's events pass unchanged.
          return retried === undefined ? events : events.pipe(map((event) => withRetriedUsage(event, retried)));
        };
        const final = (event: ModelEvent): ModelEvent => withRetriedUsage(event, retried);
        return defer(attempt).pipe(
          retry({
            delay: (error: unknown, retryCount: number) => {
              if (!(error instanceof FailedBeforeContent)) return throwError(() => error);
              last = error;
              // With `retries: 0` nothing was retried, so there is nothing to give up on.
              if (retryCount > retries) return throwError(() => (retries === 0 ? error : new FailedBeforeContent(error.held, gaveUp(error.event, retryCount))));
              const delayMs = delayOf(error.event, retryCount);
              if (delayMs === undefined) return throwError(() => error);
              // Counted once the attempt is sent again; an abort during the wait reports it as it is.
              return waitUnlessAborted(delayMs, scheduler, signal).pipe(tap(() => (retried = addSpent(retried, error.event.error))));
            },
          }),
          catchError((error: unknown) => {
            if (error instanceof FailedBeforeContent) return from([...error.held, final(error.event)]);
            if (error instanceof RetryWaitAborted && last) return from([...last.held, final(aborted(last.event))]);
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

/** `retried` plus what a failed attempt spent, or `retried` as it was when it spent nothing. */
function addSpent(retried: Usage | undefined, failed: AssistantMessage): Usage | undefined {
  const spent = spentBy(failed);
  if (!hasUsage(spent)) return retried;
  if (retried !== undefined) addUsage(spent, retried);
  return spent;
}

/** The event with `retriedUsage` on its final message; partials, and any event without it, pass unchanged. */
function withRetriedUsage(event: ModelEvent, retriedUsage: Usage | undefined): ModelEvent {
  if (retriedUsage === undefined) return event;
  if (event.type === "done") return { ...event, message: { ...event.message, retriedUsage } };
  if (event.type === "error") return { ...event, error: { ...event.error, retriedUsage } };
  return event;
}

function gaveUp(event: ModelErrorEvent, attempts: number): ModelErrorEvent {
  const errorMessage = `${errorMessageOf(event.error)} (gave up after ${attempts} attempts)`;
  return { ...event, error: { ...event.error, errorMessage } };
}

function aborted(event: ModelErrorEvent): ModelErrorEvent {
  const { failure: _failure, ...rest } = event;
  return { ...rest, reason: "aborted", error: { ...event.error, stopReason: "aborted", errorMessage: "Request was aborted" } };
}
