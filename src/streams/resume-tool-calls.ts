import { Observable } from "rxjs";
import { executeToolCalls } from "../operators/tool-calls/execute-tool-calls.js";
import { forwardingObserver } from "../operators/forwarding-observer.js";
import { ToolBatchSummary } from "../operators/tool-calls/tool-batch.js";
import type { AgentEvent, AgentTool, ToolResultMessage } from "../types.js";
import type { ReopenedToolCalls } from "./transcript/reopened-tool-calls.js";
import { appendMessage, messageEventsOf, type RunState } from "./run-state.js";

/**
 * Picks up a batch that a process stopped while calls waited for approval (`Agent.open`), as
 * the opening of a run's first turn.
 *
 * Emits, for each call that waits again: `tool_execution_start`, `tool_approval_start` with the
 * `since` of its first wait, and, once answered (or timed out, aborted, cancelled), what a live
 * batch emits after the answer. Then the result message of every reopened call, in call order
 * (those that had finished or were interrupted included), each appended to the run's transcript;
 * then completes, and the turn goes on to the model call.
 *
 * A waiting call is prepared again (`prepareArguments`, validation: they depend on its arguments
 * only) but `beforeToolCall` is not asked again: it allowed the call before the wait, and the
 * approval is the gate that remains. The call waits whatever the tool's `needsApproval` says now:
 * a person was asked, and only their answer lets it run. `approvalTimeoutMs` counts from the reopen.
 */
export function resumeToolCalls(run: RunState, reopened: ReopenedToolCalls): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    const waiting = reopened.calls.flatMap((call) => (call.approval ? [call] : []));
    const since = new Map(waiting.map((call) => [call.toolCall.id, call.approval.since]));
    const waitingTools = new Set(waiting.map((call) => call.toolCall.name));
    // Why a child object and not a copy: a tool may be a class instance whose methods a spread loses.
    const tools = run.context.tools?.map((tool) => (waitingTools.has(tool.name) ? (Object.create(tool, { needsApproval: { value: true } }) as AgentTool) : tool));
    const { beforeToolCall: _askedBefore, ...config } = run.config;
    let results: ToolResultMessage[] = [];
    const batch$ = executeToolCalls(
      reopened.assistant,
      waiting.map((call) => call.toolCall),
      // A copy of the run: the time limits of its calls go to the run's own, which the run cancels.
      { ...run, config, context: { ...run.context, ...(tools === undefined ? {} : { tools }) }, deadlinesOwner: run },
    );
    return batch$.subscribe(
      forwardingObserver(subscriber, {
        next: (output: AgentEvent | ToolBatchSummary) => {
          // A failing steering queue (the summary's `failure`) fails the model call that follows too.
          if (output instanceof ToolBatchSummary) results = output.results;
          // The batch's own result messages: they come again below, among the others, in call order.
          else if (output.type === "message_start" || output.type === "message_end") return;
          else if (output.type === "tool_approval_start") subscriber.next({ ...output, since: since.get(output.toolCallId) ?? output.since });
          else subscriber.next(output);
        },
        complete: () => {
          let next = 0;
          for (const call of reopened.calls) {
            const result = call.result ?? results[next++]!;
            appendMessage(run, result);
            for (const event of messageEventsOf(result)) subscriber.next(event);
          }
          subscriber.complete();
        },
      }),
    );
  });
}
