import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../types.js";

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
  if (assistant === undefined || roleOf(assistant) !== "assistant") return [];
  const { stopReason } = assistant as AssistantMessage;
  // A failed or aborted message's tool calls never ran and are not sent back to a model.
  if (stopReason === "error" || stopReason === "aborted") return [];
  const answered = new Set(
    messages.slice(assistantIndex + 1).map((message) => (message as ToolResultMessage).toolCallId),
  );
  return (assistant as AssistantMessage).content.flatMap((block) =>
    block.type === "toolCall" && !answered.has(block.id)
      ? [
          {
            role: "toolResult" as const,
            toolCallId: block.id,
            toolName: block.name,
            content: [{ type: "text" as const, text: INTERRUPTED_TOOL_TEXT }],
            details: {},
            isError: true,
            timestamp,
          },
        ]
      : [],
  );
}

function roleOf(message: AgentMessage | undefined): unknown {
  return (message as { role?: unknown } | undefined)?.role;
}
