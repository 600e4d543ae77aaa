import type { AssistantMessage, ModelEvent, ToolCall } from "../types.js";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../util/json-depth.js";

/**
 * The tool call as the loop may pass it on: itself, or, when its `arguments` nest deeper than
 * `MAX_JSON_DEPTH`, a copy with `arguments: {}` and the model's text in `rawArguments`, which
 * validation refuses with "arguments nest deeper than 128 levels" (validate-arguments.ts).
 *
 * Why here, where a model's events enter the loop: every event reaches `events$` subscribers,
 * the wire encoder, transcripts and `Value.Clone`, and each of them recurses; 6,000 levels of
 * `[` took a server down (issue 27). Why a WeakMap: a streamed call's block object is shared by
 * every partial until it changes, so each block is walked once, and a replaced one is replaced
 * by the same copy every time.
 */
export function boundedToolCall(block: ToolCall): ToolCall {
  let bounded = checkedBlocks.get(block);
  if (bounded === undefined) {
    bounded = nestsDeeperThan(block.arguments) ? { ...block, arguments: {}, rawArguments: rawTextOf(block) } : block;
    checkedBlocks.set(block, bounded);
  }
  return bounded;
}

/** The message with every tool call bounded; the same object when none needed it. */
export function boundedMessage<T extends AssistantMessage | undefined>(message: T): T {
  if (typeof message !== "object" || message === null || !Array.isArray(message.content)) return message;
  let content: AssistantMessage["content"] | undefined;
  message.content.forEach((block, index) => {
    if (typeof block !== "object" || block === null || block.type !== "toolCall") return;
    const bounded = boundedToolCall(block);
    if (bounded === block) return;
    content ??= [...message.content];
    content[index] = bounded;
  });
  return content === undefined ? message : { ...message, content };
}

/** The event with its messages and tool call bounded; the same object when none needed it. */
export function boundedModelEvent(event: ModelEvent): ModelEvent {
  switch (event.type) {
    case "done": {
      const message = boundedMessage(event.message);
      return message === event.message ? event : { ...event, message };
    }
    case "error": {
      const error = boundedMessage(event.error);
      return error === event.error ? event : { ...event, error };
    }
    case "toolcall_end": {
      const partial = boundedMessage(event.partial);
      const toolCall = typeof event.toolCall === "object" && event.toolCall !== null ? boundedToolCall(event.toolCall) : event.toolCall;
      return partial === event.partial && toolCall === event.toolCall ? event : { ...event, partial, toolCall };
    }
    default: {
      const partial = boundedMessage(event.partial);
      return partial === event.partial ? event : { ...event, partial };
    }
  }
}

const checkedBlocks = new WeakMap<ToolCall, ToolCall>();

/**
 * The model's own text when it sent one that is too deep; else a stand-in that nests one level
 * past the limit, so validation names the cause. Why not the arguments as JSON: writing them
 * out is the very recursion that overflows.
 */
function rawTextOf(block: ToolCall): string {
  if (typeof block.rawArguments === "string" && block.rawArguments !== "") return block.rawArguments;
  return "[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1);
}
