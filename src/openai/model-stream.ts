import type OpenAI from "openai";
import type { Observable } from "rxjs";
import { asyncScheduler, catchError, concatWith, defer, from, map, mergeMap, takeWhile } from "rxjs";
import { withRetry } from "../model/with-retry.js";
import type { RetryOptions } from "../model/with-retry.js";
import type { LlmContext, Model, ModelEvent, ModelStreamOptions, ThinkingLevel } from "../types/model.js";
import { fromSdkStream } from "./from-sdk-stream.js";
import { describeProviderError, jsonPreview, modelFailureOf } from "./provider-errors.js";
import type { StreamAccumulator } from "./stream-accumulator.js";
import type { OpenAIModelOptions } from "./openai-options.js";
import { createOpenAIClient } from "./openai-options.js";
import { loadOpenAIClient } from "./openai-sdk.js";
import type { AccumulatorOptions } from "./stream-accumulator.js";
import { redactText } from "../util/redact-credentials.js";
import { errorText } from "../util/error-text.js";

export interface ModelStreamSetup<Chunk> {
  /** Starts the SDK call with the subscription's abort signal. */
  start: (signal: AbortSignal) => PromiseLike<AsyncIterable<Chunk>>;
  accumulator: StreamAccumulator<Chunk>;
  signal: AbortSignal;
  /** The scheduler's clock, to read an HTTP-date `Retry-After`. */
  now: () => number;
}

/**
 * The pipeline both OpenAI models share: SDK call -> accumulator -> exactly one terminal event,
 * after which the request is released. Retries are not here: `openaiModel` wraps the model in
 * the core's `withRetry`, which the `failure` on the error event informs.
 *
 * ```text
 * fromSdkStream   --c--c--c--|        (or --#)
 * accumulator     --(start,text_start,text_delta)--text_delta--(text_end,done)|
 *                                                  (or --(start,error{failure})|)
 * ```
 *
 * Contract: never errors; failures become the accumulator's `error` event, with the failure's
 * class (transient, status, Retry-After) as `failure`.
 */
export function streamModelEvents<Chunk>(setup: ModelStreamSetup<Chunk>): Observable<ModelEvent> {
  const { accumulator } = setup;
  return fromSdkStream(setup.start, { signal: setup.signal }).pipe(
    // An array is an ObservableInput: no Observable per chunk.
    mergeMap((chunk) => pushed(accumulator, chunk)),
    concatWith(defer(() => from(accumulator.end()))),
    catchError((error: unknown) => from(failedEvents(accumulator, error, setup.now()))),
    // Unsubscribes from the request as soon as the answer is complete (or failed).
    takeWhile((event) => event.type !== "done" && event.type !== "error", true),
  );
}

/**
 * The accumulator's last events for a failure, the `error` event with the failure's class. Why
 * the second try: describing the failure reads it (`instanceof`, `status`, `message`), and what
 * a custom client or `fetch` throws may throw as it is read (a revoked Proxy); the stream then
 * errored, against this function's contract. Such a failure is described by `errorText` alone.
 */
function failedEvents<Chunk>(accumulator: StreamAccumulator<Chunk>, error: unknown, now: number): ModelEvent[] {
  try {
    return classifiedFailureEvents(accumulator, error, now);
  } catch {
    return classifiedFailureEvents(accumulator, new Error(`The model call failed: ${errorText(error)}`), now);
  }
}

function classifiedFailureEvents<Chunk>(accumulator: StreamAccumulator<Chunk>, error: unknown, now: number): ModelEvent[] {
  const failure = modelFailureOf(error, now);
  return accumulator.fail(error).map((event) => (event.type === "error" && event.reason === "error" ? { ...event, failure } : event));
}

/**
 * The events of one chunk. Why the guard: the SDK parses each chunk's JSON and checks nothing,
 * so a server of one's own may send `null` or `{"choices": 5}`; the accumulator's TypeError
 * ("chunk.choices?.find is not a function") named neither the chunk nor the server.
 */
function pushed<Chunk>(accumulator: StreamAccumulator<Chunk>, chunk: Chunk): ModelEvent[] {
  try {
    return accumulator.push(chunk);
  } catch (error) {
    throw new Error(`The server sent a chunk that could not be read (${jsonPreview(chunk)}): ${describeProviderError(error)}`, { cause: error });
  }
}

/** The retry settings of a model's options, for `withRetry`. */
export function retryOptionsOf(options: OpenAIModelOptions): RetryOptions {
  return {
    ...(options.maxRetries !== undefined ? { retries: options.maxRetries } : {}),
    ...(options.retryBaseDelayMs !== undefined ? { initialDelayMs: options.retryBaseDelayMs } : {}),
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
 * context and streamed through `streamModelEvents`, wrapped in `withRetry` (the provider's only
 * retry: `maxRetries: 0` turns it off, e.g. to wrap the model in your own `withRetry`). A request
 * that cannot even be built (no credentials, an unserialisable context, an SDK that cannot be
 * loaded) still ends as an `error` event, not an Observable error.
 *
 * The SDK is imported at the first call of a model given no `client` (`loadOpenAIClient`), so
 * making a model stays synchronous and importing the provider stays light; later calls reuse the
 * client at once.
 */
export function openaiModel<Options extends OpenAIModelOptions & { model: string; provider?: string }, Body, Chunk>(
  options: Options,
  api: OpenAIApi<Options, Body, Chunk>,
): Model {
  const provider = options.provider ?? "openai";
  const scheduler = options.scheduler ?? asyncScheduler;
  let client: OpenAI | undefined = options.client;
  const model: Model = {
    id: options.model,
    provider,
    api: api.api,
    stream(context: LlmContext, { signal, thinkingLevel }: ModelStreamOptions): Observable<ModelEvent> {
      return defer(() => {
        const identity = { api: api.api, provider, model: options.model, timestamp: scheduler.now() };
        const accumulator = api.createAccumulator({ ...identity, ...(options.cost ? { cost: options.cost } : {}) });
        const fail = (error: unknown) => from(accumulator.fail(error)).pipe(map(withoutKey(options.apiKey)));
        // Never errors: a request that cannot be built fails here, and streamModelEvents never errors.
        const send = (sdk: OpenAI): Observable<ModelEvent> => {
          let body: Body;
          try {
            body = api.buildRequest(context, withThinkingLevel(options, thinkingLevel));
          } catch (error) {
            return fail(error);
          }
          return streamModelEvents<Chunk>({
            start: (requestSignal) => api.send(sdk, body, requestSignal),
            accumulator,
            signal,
            now: () => scheduler.now(),
          }).pipe(map(withoutKey(sdk.apiKey ?? undefined)));
        };
        if (client) return send(client);
        return from(loadOpenAIClient()).pipe(
          map((OpenAIClient) => (client ??= createOpenAIClient(options, OpenAIClient))),
          mergeMap(send),
          catchError(fail),
        );
      });
    },
  };
  return withRetry(model, retryOptionsOf(options));
}

/**
 * A model's options with the call's thinking level as `reasoningEffort` (`"off"`: none sent, as
 * pi-agent-core sends none; servers without reasoning reject the field), or as they are when the
 * call gave none.
 */
function withThinkingLevel<Options extends OpenAIModelOptions>(options: Options, thinkingLevel: ThinkingLevel | undefined): Options {
  if (thinkingLevel === undefined) return options;
  const { reasoningEffort: _configured, ...rest } = options;
  return (thinkingLevel === "off" ? rest : { ...rest, reasoningEffort: thinkingLevel }) as Options;
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
