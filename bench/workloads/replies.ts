import { emptyUsage } from "../../src/types/messages.js";
import type { AssistantMessage, ModelEvent, TextContent, ToolCall } from "../../src/index.js";

/** What one scripted reply holds: text deltas, then tool calls. */
export interface ReplyShape {
  deltas: number;
  toolCalls: number;
}

/** The argument object every bench tool call carries (validated by both loops). */
export interface BenchToolArguments extends Record<string, unknown> {
  n: number;
}

export const BENCH_TOOL_NAME = "work";

/**
 * Precomputes one model reply as the `ModelEvent` list a provider would stream: `start`,
 * `text_start`, one `text_delta` per delta, `text_end`, per tool call `toolcall_start`,
 * `toolcall_delta`, `toolcall_end`, then `done`.
 *
 * Why precomputed: building partials costs as much as the loop's own work, so it happens once,
 * outside the timed region, and every implementation replays the very same immutable objects.
 * Each event carries its own snapshot of the partial message, as real providers do.
 */
export function buildReply(shape: ReplyShape, replyIndex: number): ModelEvent[] {
  let partial: AssistantMessage = {
    role: "assistant",
    content: [],
    api: "bench",
    provider: "bench",
    model: "bench",
    usage: emptyUsage(),
    stopReason: shape.toolCalls > 0 ? "toolUse" : "stop",
    timestamp: 0,
  };
  const events: ModelEvent[] = [{ type: "start", partial }];
  const replaceLast = (block: TextContent | ToolCall): AssistantMessage => {
    partial = { ...partial, content: [...partial.content.slice(0, -1), block] };
    return partial;
  };
  if (shape.deltas > 0) {
    const contentIndex = partial.content.length;
    partial = { ...partial, content: [...partial.content, { type: "text", text: "" }] };
    events.push({ type: "text_start", contentIndex, partial });
    let text = "";
    for (let index = 0; index < shape.deltas; index++) {
      const delta = index === 0 ? "word" : " word";
      text += delta;
      events.push({ type: "text_delta", contentIndex, delta, partial: replaceLast({ type: "text", text }) });
    }
    events.push({ type: "text_end", contentIndex, content: text, partial });
  }
  for (let call = 0; call < shape.toolCalls; call++) {
    const contentIndex = partial.content.length;
    const id = `call_${replyIndex}_${call}`;
    const args: BenchToolArguments = { n: call };
    partial = { ...partial, content: [...partial.content, { type: "toolCall", id, name: BENCH_TOOL_NAME, arguments: {} }] };
    events.push({ type: "toolcall_start", contentIndex, partial });
    events.push({ type: "toolcall_delta", contentIndex, delta: JSON.stringify(args), partial });
    const toolCall: ToolCall = { type: "toolCall", id, name: BENCH_TOOL_NAME, arguments: args };
    events.push({ type: "toolcall_end", contentIndex, toolCall, partial: replaceLast(toolCall) });
  }
  events.push({ type: "done", reason: shape.toolCalls > 0 ? "toolUse" : "stop", message: partial });
  return events;
}

/** `turns` replies of `shape` followed by a closing text reply of `closingDeltas` deltas. */
export function buildConversation(turns: number, shape: ReplyShape, closingDeltas = 3): ModelEvent[][] {
  const replies: ModelEvent[][] = [];
  for (let turn = 0; turn < turns; turn++) replies.push(buildReply(shape, turn));
  if (shape.toolCalls > 0) replies.push(buildReply({ deltas: closingDeltas, toolCalls: 0 }, turns));
  return replies;
}
