import type { Model } from "../types/model.js";
import type { ChatRequestOptions } from "./chat-request.js";
import { buildChatRequest } from "./chat-request.js";
import { ChatStreamAccumulator } from "./chat-stream-accumulator.js";
import { openaiModel } from "./model-stream.js";

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
  return openaiModel(options, {
    api: openaiChatApi,
    createAccumulator: (accumulatorOptions) => new ChatStreamAccumulator(accumulatorOptions),
    buildRequest: buildChatRequest,
    send: (client, body, signal) => client.chat.completions.create(body, { signal, maxRetries: 0 }),
  });
}
