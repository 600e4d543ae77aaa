import type OpenAI from "openai";
import type { Observable } from "rxjs";
import { asyncScheduler, defer } from "rxjs";
import type { LlmContext, Model, ModelEvent, ModelStreamOptions } from "../types/model.js";
import type { ResponsesRequestOptions } from "./responses-request.js";
import { buildResponsesRequest, responsesApi } from "./responses-request.js";
import type { ResponsesStreamEvent } from "./responses-stream-accumulator.js";
import { ResponsesStreamAccumulator } from "./responses-stream-accumulator.js";
import { failedBeforeStart, retryConfigOf, streamModelEvents } from "./model-stream.js";
import { createOpenAIClient } from "./openai-options.js";

/** Options of `openaiResponses`. */
export type OpenAIResponsesOptions = ResponsesRequestOptions;

export const openaiResponsesApi = responsesApi;

/**
 * A model served through the Responses API (OpenAI, Azure OpenAI, and servers that copy it):
 * streams reasoning summaries as thinking and carries encrypted reasoning between turns.
 *
 * Contract: `stream` is cold; each subscription sends one request (plus retries of transient
 * failures before the first token) and unsubscribing aborts it. It never errors: failures and
 * aborts end with an `error` event.
 * @example
 * const model = openaiResponses({ model: "gpt-5-mini", reasoningEffort: "low", reasoningSummary: "auto" });
 */
export function openaiResponses(options: OpenAIResponsesOptions): Model {
  const provider = options.provider ?? "openai";
  const scheduler = options.scheduler ?? asyncScheduler;
  let client: OpenAI | undefined;
  return {
    id: options.model,
    provider,
    api: openaiResponsesApi,
    stream(context: LlmContext, { signal }: ModelStreamOptions): Observable<ModelEvent> {
      return defer(() => {
        const identity = { api: openaiResponsesApi, provider, model: options.model, timestamp: scheduler.now() };
        const accumulator = new ResponsesStreamAccumulator({ ...identity, ...(options.cost ? { cost: options.cost } : {}) });
        let sdk: OpenAI;
        let body: ReturnType<typeof buildResponsesRequest>;
        try {
          sdk = client ??= createOpenAIClient(options);
          body = buildResponsesRequest(context, options);
        } catch (error) {
          // Missing credentials or an unserialisable context: still data, not an Observable error.
          return failedBeforeStart(accumulator, error);
        }
        return streamModelEvents<ResponsesStreamEvent>({
          start: (requestSignal) => sdk.responses.create(body, { signal: requestSignal, maxRetries: 0 }) as PromiseLike<
              AsyncIterable<ResponsesStreamEvent>
            >,
          accumulator,
          signal,
          retry: retryConfigOf(options),
        });
      });
    },
  };
}
