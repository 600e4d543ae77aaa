import type {
  FunctionTool,
  ResponseCreateParamsStreaming,
  ResponseFunctionCallOutputItem,
  ResponseIncludable,
  ResponseInputContent,
  ResponseInputItem,
} from "openai/resources/responses/responses";
import type { AssistantMessage, ImageContent, Message, TextContent, ToolResultMessage } from "../types/messages.js";
import { isFailedMessage } from "../types/messages.js";
import type { LlmContext, ModelTool } from "../types/model.js";
import type { OpenAIModelOptions } from "./openai-options.js";
import { argumentsText, imageDataUrl } from "./openai-options.js";
import { pairedForModel } from "../model/paired-for-model.js";

export const responsesApi = "openai-responses";

/** Options of `openaiResponses` that shape the request body. */
export interface ResponsesRequestOptions extends OpenAIModelOptions {
  /** Asks reasoning models for readable summaries of their reasoning (streamed as thinking). */
  reasoningSummary?: "auto" | "concise" | "detailed";
  /** Whether OpenAI keeps the response. Default `false`: every call carries its full input. */
  store?: boolean;
  /**
   * Default: `["reasoning.encrypted_content"]` when `reasoningEffort` or `reasoningSummary` is
   * set, so reasoning can be sent back on the next call without `store`.
   */
  include?: ResponseIncludable[];
  toolChoice?: ResponseCreateParamsStreaming["tool_choice"];
  parallelToolCalls?: boolean;
}

/**
 * The Responses API request for a context.
 *
 * Contract: the system prompt becomes `instructions`. Messages this API produced go back as
 * their items: reasoning (from `thinkingSignature`), output text (with its item id) and function
 * calls (call id and item id, joined as `call_id|item_id` in `ToolCall.id`). Messages from
 * other APIs go back as plain text and calls, without their provider data.
 */
export function buildResponsesRequest(context: LlmContext, options: ResponsesRequestOptions): ResponseCreateParamsStreaming {
  const body: ResponseCreateParamsStreaming = {
    model: options.model,
    input: pairedForModel(context.messages).flatMap(toInputItems),
    stream: true,
    store: options.store ?? false,
  };
  if (context.systemPrompt) body.instructions = context.systemPrompt;
  if (context.tools && context.tools.length > 0) {
    body.tools = context.tools.map((tool) => toResponsesTool(tool, options.strictTools));
    if (options.toolChoice !== undefined) body.tool_choice = options.toolChoice;
    if (options.parallelToolCalls !== undefined) body.parallel_tool_calls = options.parallelToolCalls;
  }
  if (options.maxTokens !== undefined) body.max_output_tokens = options.maxTokens;
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (options.reasoningEffort !== undefined || options.reasoningSummary !== undefined) {
    body.reasoning = {
      ...(options.reasoningEffort !== undefined ? { effort: options.reasoningEffort } : {}),
      ...(options.reasoningSummary !== undefined ? { summary: options.reasoningSummary } : {}),
    };
  }
  const include = options.include ?? (body.reasoning ? ["reasoning.encrypted_content" as const] : undefined);
  if (include && include.length > 0) body.include = include;
  return { ...body, ...options.extraBody } as ResponseCreateParamsStreaming;
}

/** The Responses API's flat function tool. `strict` is explicit: the API defaults it to on. */
export function toResponsesTool(tool: ModelTool, strict: boolean | undefined): FunctionTool {
  return {
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as Record<string, unknown>,
    strict: strict ?? false,
  };
}

/** Splits `call_id|item_id` (our `ToolCall.id` for this API); ids from elsewhere have no item id. */
export function splitToolCallId(id: string): { callId: string; itemId: string | undefined } {
  const separator = id.indexOf("|");
  return separator < 0 ? { callId: id, itemId: undefined } : { callId: id.slice(0, separator), itemId: id.slice(separator + 1) };
}

function toInputItems(message: Message): ResponseInputItem[] {
  switch (message.role) {
    case "user":
      return [
        {
          role: "user",
          content: typeof message.content === "string" ? message.content : message.content.map(toInputContent),
        },
      ];
    case "assistant":
      return toAssistantItems(message);
    case "toolResult":
      return [toFunctionCallOutput(message)];
  }
}

function toInputContent(block: TextContent | ImageContent): ResponseInputContent {
  return block.type === "text"
    ? { type: "input_text", text: block.text }
    : { type: "input_image", image_url: imageDataUrl(block), detail: "auto" };
}

function toAssistantItems(message: AssistantMessage): ResponseInputItem[] {
  const native = message.api === responsesApi;
  // A failed response may end right after a reasoning item, which the API rejects on its own.
  const failed = isFailedMessage(message);
  const keepReasoning = native && !failed;
  const items: ResponseInputItem[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case "thinking": {
        const reasoning = keepReasoning ? parseReasoningItem(block.thinkingSignature) : undefined;
        if (reasoning) items.push(reasoning);
        break;
      }
      case "text":
        if (block.text === "") break;
        items.push(
          native && block.textSignature
            ? {
                type: "message",
                role: "assistant",
                id: block.textSignature,
                status: "completed",
                content: [{ type: "output_text", text: block.text, annotations: [] }],
              }
            : { role: "assistant", content: block.text },
        );
        break;
      case "toolCall": {
        // A failed or aborted message's tool calls never ran and have no results to pair with.
        if (failed) break;
        const { callId, itemId } = splitToolCallId(block.id);
        items.push({
          type: "function_call",
          call_id: callId,
          name: block.name,
          arguments: argumentsText(block),
          ...(native && itemId ? { id: itemId } : {}),
        });
        break;
      }
    }
  }
  return items;
}

/** The reasoning item saved in `thinkingSignature`, trimmed to the fields the API accepts back. */
function parseReasoningItem(signature: string | undefined): ResponseInputItem | undefined {
  if (!signature) return undefined;
  try {
    const item = JSON.parse(signature) as { type?: unknown; id?: unknown; summary?: unknown; encrypted_content?: unknown };
    if (item.type !== "reasoning" || typeof item.id !== "string") return undefined;
    return {
      type: "reasoning",
      id: item.id,
      summary: Array.isArray(item.summary) ? (item.summary as { type: "summary_text"; text: string }[]) : [],
      ...(typeof item.encrypted_content === "string" ? { encrypted_content: item.encrypted_content } : {}),
    };
  } catch {
    return undefined;
  }
}

function toFunctionCallOutput(message: ToolResultMessage): ResponseInputItem {
  const { callId } = splitToolCallId(message.toolCallId);
  const hasImages = message.content.some((block) => block.type === "image");
  const text = message.content
    .filter((block): block is TextContent => block.type === "text")
    .map((block) => block.text)
    .join("\n");
  const output: string | ResponseFunctionCallOutputItem[] = hasImages
    ? message.content.map(
        (block): ResponseFunctionCallOutputItem =>
          block.type === "text"
            ? { type: "input_text", text: block.text }
            : { type: "input_image", image_url: imageDataUrl(block), detail: "auto" },
      )
    : text;
  return { type: "function_call_output", call_id: callId, output };
}
