import { isAssistantMessage, isFailedMessage, roleOf, toolCallsOf } from "../../types/messages.js";
import type { AgentMessage, ToolCall, ToolResultMessage } from "../../types.js";

export const INTERRUPTED_TOOL_TEXT = "The tool call was interrupted before the tool finished.";

/**
 * The tool results missing at the end of a transcript: one error result for each tool call of
 * the last assistant message that has none (a crash during tool execution leaves those).
 *
 * Why only the end: the loop appends results right after their assistant message, so a gap can
 * only be left by a run that stopped there.
 */
export function missingToolResults(messages: readonly AgentMessage[], timestamp: number): ToolResultMessage[] {
  let assistantIndex = messages.length - 1;
  while (assistantIndex >= 0 && roleOf(messages[assistantIndex]) === "toolResult") assistantIndex -= 1;
  const assistant = messages[assistantIndex];
  // A failed or aborted message's tool calls never ran and are not sent back to a model.
  if (!isAssistantMessage(assistant) || isFailedMessage(assistant)) return [];
  const answered = new Set(
    messages.slice(assistantIndex + 1).map((message) => (message as ToolResultMessage).toolCallId),
  );
  return toolCallsOf(assistant)
    .filter((call) => !answered.has(call.id))
    .map((call) => interruptedResult(call, timestamp));
}

/**
 * The transcript with every tool call anywhere in it paired with a result, or `undefined` when
 * every call already has one (then nothing is copied).
 *
 * A missing result (a store that lost a line, a transcript edited by hand) gets an error result
 * placed after the results its assistant message has, before the next user or assistant
 * message: a model call with an unpaired call fails (OpenAI answers HTTP 400). The loop runs this
 * once per run, over the transcript it starts from; its own turns pair every call. `following`:
 * the messages the run adds first (its prompts), which may hold the results the last calls lack
 * (`Agent.continue` repairs the end of a transcript that way). `answeredFirst`: ids of the last
 * calls the run answers before its first model call (a reopened batch, `Agent.open`). `from`: where
 * to start, when the messages before it are known to be paired (`lastTurnStart`).
 */
export function pairToolCalls(
  messages: readonly AgentMessage[],
  timestamp: number,
  following: readonly AgentMessage[] = [],
  answeredFirst: readonly string[] = [],
  from = 0,
): AgentMessage[] | undefined {
  let paired: AgentMessage[] | undefined;
  for (let index = from; index < messages.length; index++) {
    const message = messages[index]!;
    const calls = isAssistantMessage(message) && !isFailedMessage(message) ? toolCallsOf(message) : [];
    if (calls.length === 0) {
      paired?.push(message);
      continue;
    }
    let end = index + 1;
    while (end < messages.length && roleOf(messages[end]) !== "assistant" && roleOf(messages[end]) !== "user") end += 1;
    const answered = new Set<string>();
    for (let other = index + 1; other < end; other++) {
      if (roleOf(messages[other]) === "toolResult") answered.add((messages[other] as ToolResultMessage).toolCallId);
    }
    if (end === messages.length) {
      for (const id of answeredFirst) answered.add(id);
      for (const next of following) {
        if (roleOf(next) !== "toolResult") break;
        answered.add((next as ToolResultMessage).toolCallId);
      }
    }
    const missing = calls.filter((call) => !answered.has(call.id));
    if (missing.length === 0) {
      paired?.push(message);
      continue;
    }
    paired ??= messages.slice(0, index);
    for (let other = index; other < end; other++) paired.push(messages[other]!);
    for (const call of missing) paired.push(interruptedResult(call, timestamp));
    index = end - 1;
  }
  return paired;
}

/**
 * Where the last user or assistant message at or after `from` stands (`from` when there is none).
 * Once `pairToolCalls` found everything paired, the messages before it stay paired whatever is
 * appended: a call's results come after it and before the next user or assistant message.
 */
export function lastTurnStart(messages: readonly AgentMessage[], from: number): number {
  for (let index = messages.length - 1; index > from; index--) {
    const role = roleOf(messages[index]);
    if (role === "user" || role === "assistant") return index;
  }
  return from;
}

/** The error result of a call that was running when its process stopped. */
export function interruptedResult(call: ToolCall, timestamp: number): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text: INTERRUPTED_TOOL_TEXT }],
    details: {},
    isError: true,
    timestamp,
  };
}
