import type { Observable } from "rxjs";
import { catchError, concatWith, defer, from, mergeMap, takeWhile } from "rxjs";
import type { ModelEvent } from "../types/model.js";
import { fromSdkStream } from "./from-sdk-stream.js";
import type { RetryTransientConfig } from "./retry-transient.js";
import { retryTransient } from "./retry-transient.js";
import type { StreamAccumulator } from "./stream-accumulator.js";
import type { OpenAIModelOptions } from "./openai-options.js";

export interface ModelStreamSetup<Chunk> {
  /** Starts the SDK call with the subscription's abort signal. */
  start: (signal: AbortSignal) => PromiseLike<AsyncIterable<Chunk>>;
  accumulator: StreamAccumulator<Chunk>;
  signal: AbortSignal;
  retry: RetryTransientConfig;
}

/**
 * The pipeline both OpenAI models share: SDK call -> retries before the first chunk ->
 * accumulator -> exactly one terminal event, after which the request is released.
 *
 * ```text
 * fromSdkStream   --c--c--c--|        (or --#)
 * retryTransient  retries only while nothing was emitted
 * accumulator     --(start,text_start,text_delta)--text_delta--(text_end,done)|
 * ```
 *
 * Contract: never errors; failures become the accumulator's `error` event.
 */
export function streamModelEvents<Chunk>(setup: ModelStreamSetup<Chunk>): Observable<ModelEvent> {
  const { accumulator } = setup;
  return fromSdkStream(setup.start, { signal: setup.signal }).pipe(
    retryTransient<Chunk>({ ...setup.retry, signal: setup.signal }),
    mergeMap((chunk) => from(accumulator.push(chunk))),
    concatWith(defer(() => from(accumulator.end()))),
    catchError((error: unknown) => from(accumulator.fail(error))),
    // Unsubscribes from the request as soon as the answer is complete (or failed).
    takeWhile((event) => event.type !== "done" && event.type !== "error", true),
  );
}

/** The retry settings of a model's options. */
export function retryConfigOf(options: OpenAIModelOptions): RetryTransientConfig {
  return {
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.retryBaseDelayMs !== undefined ? { baseDelayMs: options.retryBaseDelayMs } : {}),
    ...(options.retryMaxDelayMs !== undefined ? { maxDelayMs: options.retryMaxDelayMs } : {}),
    ...(options.random !== undefined ? { random: options.random } : {}),
    ...(options.scheduler !== undefined ? { scheduler: options.scheduler } : {}),
  };
}

/** A call that failed before any request (e.g. no credentials): `start` then `error`. */
export function failedBeforeStart<Chunk>(accumulator: StreamAccumulator<Chunk>, error: unknown): Observable<ModelEvent> {
  return from(accumulator.fail(error));
}
