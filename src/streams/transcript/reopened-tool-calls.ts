import { isAssistantMessage, isFailedMessage, roleOf, toolCallsOf } from "../../types/messages.js";
import type { AgentMessage, AssistantMessage, PendingApproval, ToolCall, ToolResultMessage, TranscriptRecord } from "../../types.js";
import { interruptedResult } from "./repair-transcript.js";

/**
 * The calls of a transcript's last assistant message that a process stopped before their
 * results, as its store's records tell: each one either has its result already (it finished, or
 * it was running and is repaired as interrupted) or waits for approval again.
 */
export interface ReopenedToolCalls {
  readonly assistant: AssistantMessage;
  /** Every call without a result message, in call order. */
  readonly calls: readonly ReopenedCall[];
}

export type ReopenedCall =
  | { readonly toolCall: ToolCall; readonly result: ToolResultMessage; readonly approval?: undefined }
  | { readonly toolCall: ToolCall; readonly approval: PendingApproval; readonly result?: undefined };

/**
 * Reads a stored transcript's records against its end. Undefined when the records change
 * nothing: no call waits and no finished result was kept (then the calls without results are
 * repaired as interrupted, as without records).
 *
 * A call waits again when its last approval record says it waits; a call with a `tool_result`
 * record gets that result; every other call without a result message was running and gets the
 * interrupted error. `warn` hears of records for calls the last assistant message does not have.
 */
export function reopenedToolCalls(
  messages: readonly AgentMessage[],
  records: readonly TranscriptRecord[],
  timestamp: number,
  warn: (message: string) => void,
): ReopenedToolCalls | undefined {
  if (records.length === 0) return undefined;
  let assistantIndex = messages.length - 1;
  while (assistantIndex >= 0 && roleOf(messages[assistantIndex]) === "toolResult") assistantIndex -= 1;
  const last = messages[assistantIndex];
  const assistant = isAssistantMessage(last) && !isFailedMessage(last) ? last : undefined;
  const calls = assistant ? toolCallsOf(assistant) : [];
  const answered = new Set(messages.slice(assistantIndex + 1).map((message) => (message as ToolResultMessage).toolCallId));
  const waiting = new Map<string, PendingApproval>();
  const finished = new Map<string, ToolResultMessage>();
  for (const record of records) {
    // The session's settings are not part of a batch (Agent.open applies them).
    if (record.type === "settings") continue;
    const toolCallId = record.type === "approval_pending" ? record.approval.toolCallId : record.type === "tool_result" ? record.message.toolCallId : record.toolCallId;
    if (!calls.some((call) => call.id === toolCallId)) {
      warn(`The store holds a record (${record.type}) for tool call "${toolCallId}", which the transcript's last assistant message does not have; ignored.`);
      continue;
    }
    if (answered.has(toolCallId)) continue;
    if (record.type === "approval_pending") waiting.set(toolCallId, record.approval);
    else if (record.type === "approval_settled") waiting.delete(toolCallId);
    else finished.set(toolCallId, record.message);
  }
  if (!assistant || (waiting.size === 0 && finished.size === 0)) return undefined;
  const reopened = calls
    .filter((call) => !answered.has(call.id))
    .map((toolCall): ReopenedCall => {
      const result = finished.get(toolCall.id);
      if (result) return { toolCall, result };
      const approval = waiting.get(toolCall.id);
      if (approval) return { toolCall, approval: { ...approval, toolName: toolCall.name, args: toolCall.arguments } };
      return { toolCall, result: interruptedResult(toolCall, timestamp) };
    });
  return { assistant, calls: reopened };
}

/** The calls that wait for approval again. */
export function reopenedApprovals(reopened: ReopenedToolCalls): PendingApproval[] {
  return reopened.calls.flatMap((call) => (call.approval ? [call.approval] : []));
}

/** The result of every reopened call when none waits (the next run starts with them); undefined when one does. */
export function reopenedResults(reopened: ReopenedToolCalls): ToolResultMessage[] | undefined {
  const results = reopened.calls.flatMap((call) => (call.result ? [call.result] : []));
  return results.length === reopened.calls.length ? results : undefined;
}
