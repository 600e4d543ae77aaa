import { isAssistantMessage, isFailedMessage, roleOf, toolCallsOf } from "../types/messages.js";
import type { AgentMessage, ToolResultMessage } from "../types.js";

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
    .map((call) => ({
      role: "toolResult" as const,
      toolCallId: call.id,
      toolName: call.name,
      content: [{ type: "text" as const, text: INTERRUPTED_TOOL_TEXT }],
      details: {},
      isError: true,
      timestamp,
    }));
}
