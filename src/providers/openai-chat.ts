import type OpenAI from "openai";
import type { Observable } from "rxjs";
import { asyncScheduler, defer } from "rxjs";
import type { LlmContext, Model, ModelEvent, ModelStreamOptions } from "../types/model.js";
import type { ChatRequestOptions } from "./chat-request.js";
import { buildChatRequest } from "./chat-request.js";
import type { ChatChunk } from "./chat-stream-accumulator.js";
import { ChatStreamAccumulator } from "./chat-stream-accumulator.js";
import { failedBeforeStart, retryConfigOf, streamModelEvents } from "./model-stream.js";
import { createOpenAIClient } from "./openai-options.js";

/** Options of `openaiChat`. */
export type OpenAIChatOptions = ChatRequestOptions;

export const openaiChatApi = "openai-completions";

/**
 * A model served through the Chat Completions API: OpenAI itself or any compatible server
 * (Ollama, vLLM, llama.cpp, DeepSeek, Groq, OpenRouter, Azure...).
 *
 * Contract: `stream` is cold; each subscription sends one request (plus retries of transient
 * failures before the first token) and unsubscribing aborts it. It never errors: failures and
 * aborts end with an `error` event.
 * @example
 * const model = openaiChat({ model: "llama3.2", baseURL: "http://localhost:11434/v1" });
 */
export function openaiChat(options: OpenAIChatOptions): Model {
  const provider = options.provider ?? "openai";
  const scheduler = options.scheduler ?? asyncScheduler;
  let client: OpenAI | undefined;
  return {
    id: options.model,
    provider,
    api: openaiChatApi,
    stream(context: LlmContext, { signal }: ModelStreamOptions): Observable<ModelEvent> {
      return defer(() => {
        const identity = { api: openaiChatApi, provider, model: options.model, timestamp: scheduler.now() };
        const accumulator = new ChatStreamAccumulator({ ...identity, ...(options.cost ? { cost: options.cost } : {}) });
        let sdk: OpenAI;
        let body: ReturnType<typeof buildChatRequest>;
        try {
          sdk = client ??= createOpenAIClient(options);
          body = buildChatRequest(context, options);
        } catch (error) {
          // Missing credentials or an unserialisable context: still data, not an Observable error.
          return failedBeforeStart(accumulator, error);
        }
        return streamModelEvents<ChatChunk>({
          start: (requestSignal) => sdk.chat.completions.create(body, { signal: requestSignal, maxRetries: 0 }),
          accumulator,
          signal,
          retry: retryConfigOf(options),
        });
      });
    },
  };
}
