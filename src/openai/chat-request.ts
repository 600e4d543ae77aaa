import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { AssistantMessage, ImageContent, Message, TextContent, ToolResultMessage } from "../types/messages.js";
import { isFailedMessage } from "../types/messages.js";
import type { LlmContext, ModelTool } from "../types/model.js";
import type { OpenAIModelOptions } from "./openai-options.js";
import { argumentsText, imageDataUrl, resolveBaseURL } from "./openai-options.js";
import { pairedForModel } from "../model/paired-for-model.js";

/** Options of `openaiChat` that shape the request body. */
export interface ChatRequestOptions extends OpenAIModelOptions {
  /**
   * Asks for the usage chunk (`stream_options.include_usage`). Default `true`; turn it off for
   * servers that reject `stream_options`.
   */
  includeUsage?: boolean;
  /**
   * Where `maxTokens` goes. Default: `"max_completion_tokens"` for the OpenAI API itself,
   * `"max_tokens"` for any other `baseURL` (most compatible servers know only that one).
   */
  maxTokensField?: "max_completion_tokens" | "max_tokens";
  /** Role of the system prompt. Default `"system"`; o1-style models want `"developer"`. */
  systemRole?: "system" | "developer";
  /** Default: the server's (`"auto"` when tools are given). */
  toolChoice?: ChatCompletionCreateParamsStreaming["tool_choice"];
  parallelToolCalls?: boolean;
}

/**
 * The Chat Completions request for a context.
 *
 * Contract: thinking blocks are not sent (chat has no field for them and sending them as text
 * would teach the model to imitate them); tool results become `tool` messages with their call
 * ids; images in tool results follow as one user message, since `tool` messages hold text only.
 */
export function buildChatRequest(context: LlmContext, options: ChatRequestOptions): ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = [];
  if (context.systemPrompt) messages.push({ role: options.systemRole ?? "system", content: context.systemPrompt });
  messages.push(...toChatMessages(pairedForModel(context.messages)));

  const body: ChatCompletionCreateParamsStreaming = { model: options.model, messages, stream: true };
  if (options.includeUsage ?? true) body.stream_options = { include_usage: true };
  if (context.tools && context.tools.length > 0) {
    body.tools = context.tools.map((tool) => toChatTool(tool, options.strictTools));
    if (options.toolChoice !== undefined) body.tool_choice = options.toolChoice;
    if (options.parallelToolCalls !== undefined) body.parallel_tool_calls = options.parallelToolCalls;
  }
  if (options.maxTokens !== undefined) body[maxTokensField(options)] = options.maxTokens;
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (options.reasoningEffort !== undefined) body.reasoning_effort = options.reasoningEffort;
  return { ...body, ...options.extraBody } as ChatCompletionCreateParamsStreaming;
}

function maxTokensField(options: ChatRequestOptions): "max_completion_tokens" | "max_tokens" {
  if (options.maxTokensField) return options.maxTokensField;
  const baseURL = resolveBaseURL(options);
  return !baseURL || baseURL.includes("api.openai.com") ? "max_completion_tokens" : "max_tokens";
}

/** A tool definition; TypeBox schemas are JSON Schema already (their symbol keys vanish in JSON). */
export function toChatTool(tool: ModelTool, strict: boolean | undefined): ChatCompletionTool {
  return {
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters as Record<string, unknown>,
      ...(strict !== undefined ? { strict } : {}),
    },
  };
}

function toChatMessages(messages: readonly Message[]): ChatCompletionMessageParam[] {
  const result: ChatCompletionMessageParam[] = [];
  // Images returned by tools wait until the run of `tool` messages ends.
  let pendingImages: ImageContent[] = [];
  const flushImages = (): void => {
    if (pendingImages.length === 0) return;
    result.push({
      role: "user",
      content: [
        { type: "text", text: "Images returned by the tool calls above:" },
        ...pendingImages.map(toImagePart),
      ],
    });
    pendingImages = [];
  };

  for (const message of messages) {
    if (message.role !== "toolResult") flushImages();
    switch (message.role) {
      case "user":
        result.push({
          role: "user",
          content: typeof message.content === "string" ? message.content : message.content.map(toUserPart),
        });
        break;
      case "assistant": {
        const assistant = toChatAssistant(message);
        if (assistant) result.push(assistant);
        break;
      }
      case "toolResult":
        result.push(toChatToolMessage(message));
        pendingImages.push(...message.content.filter((block): block is ImageContent => block.type === "image"));
        break;
    }
  }
  flushImages();
  return result;
}

function toUserPart(block: TextContent | ImageContent): ChatCompletionContentPart {
  return block.type === "text" ? { type: "text", text: block.text } : toImagePart(block);
}

function toImagePart(image: ImageContent): ChatCompletionContentPart {
  return { type: "image_url", image_url: { url: imageDataUrl(image) } };
}

function toChatAssistant(message: AssistantMessage): ChatCompletionMessageParam | undefined {
  const text = message.content
    .filter((block): block is TextContent => block.type === "text")
    .map((block) => block.text)
    .join("");
  // A failed or aborted message's tool calls never ran and have no results to pair with.
  const failed = isFailedMessage(message);
  const toolCalls: ChatCompletionMessageToolCall[] = message.content.flatMap((block) =>
    block.type === "toolCall" && !failed
      ? [{ id: block.id, type: "function", function: { name: block.name, arguments: argumentsText(block) } }]
      : [],
  );
  // A failed call may have produced nothing; an empty assistant message is rejected by servers.
  if (text === "" && toolCalls.length === 0) return undefined;
  return {
    role: "assistant",
    content: text === "" ? null : text,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}

function toChatToolMessage(message: ToolResultMessage): ChatCompletionMessageParam {
  const text = message.content
    .filter((block): block is TextContent => block.type === "text")
    .map((block) => block.text)
    .join("\n");
  const hasImages = message.content.some((block) => block.type === "image");
  return {
    role: "tool",
    tool_call_id: message.toolCallId,
    content: text !== "" ? text : hasImages ? "(see the images below)" : "(no output)",
  };
}
