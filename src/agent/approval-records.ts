import { isAssistantMessage } from "../types/messages.js";
import type { AgentEvent, ToolResultMessage, TranscriptRecord } from "../types.js";

/** Whether the current batch of a run keeps its results as records: a call of it waited for approval. */
export interface RecordedBatch {
  recordsResults: boolean;
}

/**
 * The store record an event makes, if any: a call starts waiting for approval, its wait ends,
 * or, in a batch where a call waited, a call ends (its result, as the batch's result message
 * will hold it, made at the same instant: `timestamp`).
 *
 * Why results only there: a result waits for the calls before it to be appended (call order),
 * and behind a call that waits for a person that may be hours; elsewhere it is seconds, and a
 * crash then repairs it as interrupted.
 */
export function approvalRecordOf(event: AgentEvent, batch: RecordedBatch, timestamp: number): TranscriptRecord | undefined {
  switch (event.type) {
    case "message_end":
      if (isAssistantMessage(event.message)) batch.recordsResults = false;
      return undefined;
    case "tool_approval_start": {
      batch.recordsResults = true;
      const { toolCallId, toolName, args, since } = event;
      return { type: "approval_pending", approval: { toolCallId, toolName, args, since } };
    }
    case "tool_approval_end":
      return { type: "approval_settled", toolCallId: event.toolCallId };
    case "tool_execution_end": {
      if (!batch.recordsResults) return undefined;
      // The message execute-tool-calls.ts makes of the same result.
      const { toolCallId, toolName, result, isError } = event;
      const message: ToolResultMessage = { role: "toolResult", toolCallId, toolName, content: result.content, details: result.details, isError, timestamp };
      if (result.usage !== undefined) message.usage = result.usage;
      return { type: "tool_result", message };
    }
    default:
      return undefined;
  }
}
