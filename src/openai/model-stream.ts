import type OpenAI from "openai";
import type { Observable } from "rxjs";
import { asyncScheduler, catchError, concatWith, defer, from, map, mergeMap, takeWhile } from "rxjs";
import type { LlmContext, Model, ModelEvent, ModelStreamOptions } from "../types/model.js";
import { fromSdkStream } from "./from-sdk-stream.js";
import type { RetryTransientConfig } from "./retry-transient.js";
import { retryTransient } from "./retry-transient.js";
import type { StreamAccumulator } from "./stream-accumulator.js";
import type { OpenAIModelOptions } from "./openai-options.js";
import { createOpenAIClient } from "./openai-options.js";
import type { AccumulatorOptions } from "./stream-accumulator.js";
import { redactText } from "../util/redact-credentials.js";

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
    // An array is an ObservableInput: no Observable per chunk.
    mergeMap((chunk) => accumulator.push(chunk)),
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

/** What tells the two OpenAI APIs apart; everything else about a model is shared. */
export interface OpenAIApi<Options extends OpenAIModelOptions, Body, Chunk> {
  api: string;
  createAccumulator(options: AccumulatorOptions): StreamAccumulator<Chunk>;
  buildRequest(context: LlmContext, options: Options): Body;
  send(client: OpenAI, body: Body, signal: AbortSignal): PromiseLike<AsyncIterable<Chunk>>;
}

/**
 * A `Model` on one OpenAI API: one lazily created client, and per call a request built from the
 * context and streamed through `streamModelEvents`. A request that cannot even be built (no
 * credentials, an unserialisable context) still ends as an `error` event, not an Observable error.
 */
export function openaiModel<Options extends OpenAIModelOptions & { model: string; provider?: string }, Body, Chunk>(
  options: Options,
  api: OpenAIApi<Options, Body, Chunk>,
): Model {
  const provider = options.provider ?? "openai";
  const scheduler = options.scheduler ?? asyncScheduler;
  let client: OpenAI | undefined;
  return {
    id: options.model,
    provider,
    api: api.api,
    stream(context: LlmContext, { signal }: ModelStreamOptions): Observable<ModelEvent> {
      return defer(() => {
        const identity = { api: api.api, provider, model: options.model, timestamp: scheduler.now() };
        const accumulator = api.createAccumulator({ ...identity, ...(options.cost ? { cost: options.cost } : {}) });
        let sdk: OpenAI;
        let body: Body;
        try {
          sdk = client ??= createOpenAIClient(options);
          body = api.buildRequest(context, options);
        } catch (error) {
          return from(accumulator.fail(error)).pipe(map(withoutKey(options.apiKey)));
        }
        return streamModelEvents<Chunk>({
          start: (requestSignal) => api.send(sdk, body, requestSignal),
          accumulator,
          signal,
          retry: retryConfigOf(options),
        }).pipe(map(withoutKey(sdk.apiKey ?? undefined)));
      });
    },
  };
}

/**
 * Blanks the API key (and anything that looks like a credential) in an error event's message:
 * a server or proxy may quote the key in its error text (issue 27, row 8).
 */
function withoutKey(apiKey: string | undefined): (event: ModelEvent) => ModelEvent {
  const secrets = apiKey === undefined ? [] : [apiKey];
  return (event) => {
    if (event.type !== "error" || typeof event.error.errorMessage !== "string") return event;
    const errorMessage = redactText(event.error.errorMessage, secrets);
    return errorMessage === event.error.errorMessage ? event : { ...event, error: { ...event.error, errorMessage } };
  };
}
