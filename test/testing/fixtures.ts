/**
 * Builders for the exact messages and events a run with `scriptedModel` produces, written
 * independently of the scripted model so tests compare against a second opinion.
 */
import { expect } from "vitest";
import { emptyUsage } from "../../src/types/messages.js";
import type {
  AgentEvent,
  AgentMessage,
  AssistantMessage,
  ModelEvent,
  TextContent,
  ToolCall,
  ToolResultMessage,
  UserMessage,
} from "../../src/types.js";
import { assertEventGrammar, type EventGrammarOptions } from "../../src/testing/event-grammar.js";

export function userMessage(content: string, timestamp = 0): UserMessage {
  return { role: "user", content, timestamp };
}

export function assistantMessage(
  content: AssistantMessage["content"],
  options: { stopReason?: AssistantMessage["stopReason"]; timestamp?: number; errorMessage?: string } = {},
): AssistantMessage {
  const message: AssistantMessage = {
    role: "assistant",
    content,
    api: "scripted",
    provider: "scripted",
    model: "scripted",
    usage: emptyUsage(),
    stopReason: options.stopReason ?? (content.some((block) => block.type === "toolCall") ? "toolUse" : "stop"),
    timestamp: options.timestamp ?? 0,
  };
  if (options.errorMessage !== undefined) message.errorMessage = options.errorMessage;
  return message;
}

export function toolCall(id: string, name: string, args: Record<string, unknown> = {}): ToolCall {
  return { type: "toolCall", id, name, arguments: args };
}

export function text(value: string): TextContent {
  return { type: "text", text: value };
}

export function toolResultMessage(
  call: ToolCall,
  content: string,
  options: { isError?: boolean; details?: unknown; timestamp?: number } = {},
): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [text(content)],
    details: "details" in options ? options.details : options.isError ? {} : undefined,
    isError: options.isError ?? false,
    timestamp: options.timestamp ?? 0,
  };
}

/** A message's `message_start` and `message_end`. */
export function announce(message: AgentMessage): AgentEvent[] {
  return [
    { type: "message_start", message },
    { type: "message_end", message },
  ];
}

/** The loop events of an assistant reply streamed by `scriptedModel` (one text delta per word). */
export function streamedReply(
  blocks: ({ type: "text"; words: string[] } | { type: "toolCall"; call: ToolCall })[],
  options: { stopReason?: AssistantMessage["stopReason"]; timestamp?: number } = {},
): { events: AgentEvent[]; message: AssistantMessage } {
  const hasCalls = blocks.some((block) => block.type === "toolCall");
  const stopReason = options.stopReason ?? (hasCalls ? "toolUse" : "stop");
  const timestamp = options.timestamp ?? 0;
  let partial = assistantMessage([], { stopReason, timestamp });
  const events: AgentEvent[] = [{ type: "message_start", message: partial }];
  const update = (assistantMessageEvent: ModelEvent) =>
    events.push({ type: "message_update", message: partial, assistantMessageEvent });
  blocks.forEach((block) => {
    const contentIndex = partial.content.length;
    if (block.type === "text") {
      partial = { ...partial, content: [...partial.content, text("")] };
      update({ type: "text_start", contentIndex, partial });
      let sofar = "";
      for (const word of block.words) {
        sofar += word;
        partial = { ...partial, content: [...partial.content.slice(0, -1), text(sofar)] };
        update({ type: "text_delta", contentIndex, delta: word, partial });
      }
      update({ type: "text_end", contentIndex, content: sofar, partial });
    } else {
      partial = { ...partial, content: [...partial.content, { ...block.call, arguments: {} }] };
      update({ type: "toolcall_start", contentIndex, partial });
      update({ type: "toolcall_delta", contentIndex, delta: JSON.stringify(block.call.arguments), partial });
      partial = { ...partial, content: [...partial.content.slice(0, -1), block.call] };
      update({ type: "toolcall_end", contentIndex, toolCall: block.call, partial });
    }
  });
  events.push({ type: "message_end", message: partial });
  return { events, message: partial };
}

/** Letters for a values map: `lettered(events)` gives `{ a: events[0], b: events[1], ... }`. */
export function lettered<T>(values: readonly T[], letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"): Record<string, T> {
  if (values.length > letters.length) throw new Error("too many values for the letters");
  return Object.fromEntries(values.map((value, index) => [letters[index]!, value]));
}

/**
 * The invariant of every tool test: the run is well formed (assertEventGrammar) and, checked
 * again explicitly, every tool call of every assistant message has exactly one result message,
 * in the assistant's order, and turn_end.toolResults are those messages.
 */
export function expectOneResultPerToolCall(events: readonly AgentEvent[], options: EventGrammarOptions = {}): void {
  assertEventGrammar(events, options);
  const ended = events.filter((event) => event.type === "message_end").map((event) => event.message);
  for (let index = 0; index < ended.length; index++) {
    const message = ended[index]!;
    if ((message as { role?: string }).role !== "assistant") continue;
    const assistant = message as AssistantMessage;
    if (assistant.stopReason === "error" || assistant.stopReason === "aborted") continue;
    const calls = assistant.content.filter((block): block is ToolCall => block.type === "toolCall");
    const results = ended.slice(index + 1, index + 1 + calls.length) as ToolResultMessage[];
    if (options.complete === false && results.length < calls.length) continue;
    expect(results.map((result) => [result.role, result.toolCallId])).toStrictEqual(
      calls.map((call) => ["toolResult", call.id]),
    );
    const allIds = ended.filter((other) => (other as { role?: string }).role === "toolResult").map((other) => (other as ToolResultMessage).toolCallId);
    for (const call of calls) expect(allIds.filter((id) => id === call.id)).toHaveLength(1);
  }
  for (const event of events) {
    if (event.type !== "turn_end") continue;
    const calls = event.message.content.filter((block): block is ToolCall => block.type === "toolCall");
    const failed = event.message.stopReason === "error" || event.message.stopReason === "aborted";
    expect(event.toolResults.map((result) => result.toolCallId)).toStrictEqual(failed ? [] : calls.map((call) => call.id));
  }
}
