import { Observable, type SchedulerLike } from "rxjs";
import { errorResult } from "../../tools/tool-results.js";
import type { AgentEvent, ToolCall, ToolResultMessage } from "../../types.js";
import { ToolBatchSummary } from "./tool-batch.js";

/** The error text each tool call of a length-truncated message gets (the reference's words). */
export function truncatedToolCallText(toolName: string): string {
  return (
    `Tool call "${toolName}" was not executed: the response hit the output token limit, so its arguments may be truncated. ` +
    "Re-issue the tool call with complete arguments."
  );
}

/**
 * Answers the tool calls of an assistant message that ended with `stopReason: "length"`
 * without running any: their arguments may parse and validate yet be cut short.
 *
 * Emits, per call in source order, `tool_execution_start`, `tool_execution_end` with an error
 * result saying the output token limit was hit, and the `toolResult` message; then a
 * `ToolBatchSummary` that does not terminate, so the model can issue the calls again.
 */
export function truncatedToolCalls(toolCalls: readonly ToolCall[], scheduler: SchedulerLike): Observable<AgentEvent | ToolBatchSummary> {
  return new Observable<AgentEvent | ToolBatchSummary>((subscriber) => {
    const results: ToolResultMessage[] = [];
    for (const toolCall of toolCalls) {
      if (subscriber.closed) return;
      const result = errorResult(truncatedToolCallText(toolCall.name));
      subscriber.next({ type: "tool_execution_start", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments });
      subscriber.next({ type: "tool_execution_end", toolCallId: toolCall.id, toolName: toolCall.name, result, isError: true });
      const message: ToolResultMessage = {
        role: "toolResult",
        toolCallId: toolCall.id,
        toolName: toolCall.name,
        content: result.content,
        details: result.details,
        isError: true,
        timestamp: scheduler.now(),
      };
      results.push(message);
      subscriber.next({ type: "message_start", message });
      subscriber.next({ type: "message_end", message });
    }
    subscriber.next(new ToolBatchSummary(results, false));
    subscriber.complete();
  });
}
