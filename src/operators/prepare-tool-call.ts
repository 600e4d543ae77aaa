import { catchError, concat, defer, map, Observable, of, race, take } from "rxjs";
import { errorText } from "../errors.js";
import { errorResult } from "../tools/tool-results.js";
import { validateArguments } from "../tools/validate-arguments.js";
import type { AgentEvent, ToolCall } from "../types.js";
import { callHook } from "./call-hook.js";
import { ABORTED_TOOL_TEXT, FinalizedToolCall, PreparedToolCall, type ToolBatch } from "./tool-batch.js";

/**
 * Announces one tool call and readies it to run.
 *
 * Emits `tool_execution_start`, then either a `PreparedToolCall` (tool found, arguments
 * prepared and valid, `beforeToolCall` allowed it) or a `FinalizedToolCall` holding the error
 * result that explains why the call will not run. If the batch is interrupted meanwhile (abort,
 * steering), `beforeToolCall` is dropped and the call is finalized as skipped; once the run's
 * signal has fired, nothing of the tool or the hooks is called.
 */
export function prepareToolCall(
  index: number,
  toolCall: ToolCall,
  batch: ToolBatch,
): Observable<AgentEvent | PreparedToolCall | FinalizedToolCall> {
  const start: AgentEvent = {
    type: "tool_execution_start",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    args: toolCall.arguments,
  };
  return concat(of(start), defer(() => readyToolCall(index, toolCall, batch)));
}

function readyToolCall(
  index: number,
  toolCall: ToolCall,
  batch: ToolBatch,
): Observable<PreparedToolCall | FinalizedToolCall> {
  const failed = (message: string, interrupted = false) =>
    of(new FinalizedToolCall(index, toolCall, errorResult(message), true, interrupted));
  // Why check the signal here: a subscriber that leaves as it hears `tool_execution_start` tears
  // the batch down, but the parallel fan-out's `connect` still finishes this synchronous step.
  // A fired signal (abort, or the run torn down) means no hook or tool code may run any more.
  if (batch.signal.aborted) {
    return failed(ABORTED_TOOL_TEXT, true);
  }
  const tool = batch.context.tools?.find((candidate) => candidate.name === toolCall.name);
  if (!tool) {
    return failed(`Tool ${toolCall.name} not found`);
  }
  let rawArguments: unknown = toolCall.rawArguments ?? toolCall.arguments;
  if (tool.prepareArguments) {
    try {
      rawArguments = tool.prepareArguments(rawArguments);
    } catch (error) {
      return failed(`prepareArguments failed for tool "${toolCall.name}": ${errorText(error)}`);
    }
  }
  const validation = validateArguments(toolCall.name, tool.parameters, rawArguments);
  if (!validation.valid) {
    return failed(validation.message);
  }
  const prepared = new PreparedToolCall(index, toolCall, tool, validation.value);
  const beforeToolCall = batch.config.beforeToolCall;
  const interrupted$ = batch.interruption.pipe(
    take(1),
    map((reason) => new FinalizedToolCall(index, toolCall, errorResult(reason), true, true)),
  );
  if (!beforeToolCall) {
    return race(interrupted$, of(prepared));
  }
  const decision$ = callHook(
    beforeToolCall,
    { assistantMessage: batch.assistantMessage, toolCall, args: validation.value, context: batch.context },
    batch.signal,
  ).pipe(
    map((decision) =>
      decision?.block
        ? new FinalizedToolCall(index, toolCall, errorResult(decision.reason || "Tool execution was blocked"), true)
        : prepared,
    ),
    catchError((error: unknown) =>
      failed(`beforeToolCall failed for tool "${toolCall.name}": ${errorText(error)}`),
    ),
  );
  return race(interrupted$, decision$);
}
