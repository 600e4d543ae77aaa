/** `rxagent/openai`: the OpenAI provider: Chat Completions and Responses streaming as `Model`s. */
export { openaiChat, openaiChatApi } from "./openai-chat.js";
export type { OpenAIChatOptions } from "./openai-chat.js";
export { openaiResponses, openaiResponsesApi } from "./openai-responses.js";
export type { OpenAIResponsesOptions } from "./openai-responses.js";
export type { ModelCost, OpenAIModelOptions, ReasoningEffort } from "./openai-options.js";
export { fromSdkStream } from "./from-sdk-stream.js";
export {
  describeProviderError,
  isTransientError,
  modelFailureOf,
  RequestAbortedError,
  StreamInterruptedError,
} from "./provider-errors.js";
