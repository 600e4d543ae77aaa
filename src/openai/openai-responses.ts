import type { Model } from "../types/model.js";
import type { ResponsesRequestOptions } from "./responses-request.js";
import { buildResponsesRequest, responsesApi } from "./responses-request.js";
import type { ResponsesStreamEvent } from "./responses-stream-accumulator.js";
import { ResponsesStreamAccumulator } from "./responses-stream-accumulator.js";
import { openaiModel } from "./model-stream.js";

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
  return openaiModel(options, {
    api: openaiResponsesApi,
    createAccumulator: (accumulatorOptions) => new ResponsesStreamAccumulator(accumulatorOptions),
    buildRequest: buildResponsesRequest,
    send: (client, body, signal) =>
      client.responses.create(body, { signal, maxRetries: 0 }) as PromiseLike<AsyncIterable<ResponsesStreamEvent>>,
  });
}
