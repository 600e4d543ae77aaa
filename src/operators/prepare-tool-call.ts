import { catchError, map, Observable, of, race, take } from "rxjs";
import { errorText } from "../errors.js";
import { errorResult } from "../tools/tool-results.js";
import { validateArguments } from "../tools/validate-arguments.js";
import type { AgentEvent, BeforeToolCallResult, ToolCall } from "../types.js";
import { fromHookResult, isPendingHookResult } from "./from-hook-result.js";
import { ABORTED_TOOL_TEXT, FinalizedToolCall, PreparedToolCall, type ToolBatch } from "./tool-batch.js";

/**
 * Announces one tool call and readies it to run.
 *
 * Emits `tool_execution_start`, then either a `PreparedToolCall` (tool found, arguments
 * prepared and valid, `beforeToolCall` allowed it) or a `FinalizedToolCall` holding the error
 * result that explains why the call will not run. If the batch is interrupted meanwhile (abort,
 * steering), `beforeToolCall` is dropped and the call is finalized as skipped. Everything up to
 * a `beforeToolCall` that answers with a Promise or an Observable happens synchronously, on
 * subscribe.
 */
export function prepareToolCall(
  index: number,
  toolCall: ToolCall,
  batch: ToolBatch,
): Observable<AgentEvent | PreparedToolCall | FinalizedToolCall> {
  return new Observable<AgentEvent | PreparedToolCall | FinalizedToolCall>((subscriber) => {
    subscriber.next({ type: "tool_execution_start", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments });
    if (subscriber.closed) return undefined;
    const outcome = readyToolCall(index, toolCall, batch);
    if (outcome instanceof Observable) return outcome.subscribe(subscriber);
    subscriber.next(outcome);
    subscriber.complete();
    return undefined;
  });
}

type Readiness = PreparedToolCall | FinalizedToolCall;

function readyToolCall(index: number, toolCall: ToolCall, batch: ToolBatch): Readiness | Observable<Readiness> {
  const failed = (message: string, interrupted = false) =>
    new FinalizedToolCall(index, toolCall, errorResult(message), true, interrupted);
  // Why check the signal here: a subscriber that leaves as it hears `tool_execution_start` tears
  // the batch down, but the parallel fan-out's `connect` still finishes this synchronous step.
  // A fired signal (abort, or the run torn down) means no hook or tool code may run any more.
  if (batch.signal.aborted) return failed(ABORTED_TOOL_TEXT, true);
  const interruptedBefore = batch.interruption.reason;
  if (interruptedBefore !== undefined) return failed(interruptedBefore, true);
  const tool = batch.context.tools?.find((candidate) => candidate.name === toolCall.name);
  if (!tool) return failed(`Tool ${toolCall.name} not found`);
  let rawArguments: unknown = toolCall.rawArguments ?? toolCall.arguments;
  if (tool.prepareArguments) {
    try {
      rawArguments = tool.prepareArguments(rawArguments);
    } catch (error) {
      return failed(`prepareArguments failed for tool "${toolCall.name}": ${errorText(error)}`);
    }
  }
  const validation = validateArguments(toolCall.name, tool.parameters, rawArguments);
  if (!validation.valid) return failed(validation.message);
  const prepared = new PreparedToolCall(index, toolCall, tool, validation.value);
  const beforeToolCall = batch.config.beforeToolCall;
  if (!beforeToolCall) return prepared;

  const hookFailed = (error: unknown) => failed(`beforeToolCall failed for tool "${toolCall.name}": ${errorText(error)}`);
  const decide = (decision: BeforeToolCallResult | undefined): Readiness =>
    decision?.block ? failed(decision.reason || "Tool execution was blocked") : prepared;
  let answer: ReturnType<typeof beforeToolCall>;
  try {
    answer = beforeToolCall(
      { assistantMessage: batch.assistantMessage, toolCall, args: validation.value, context: batch.context },
      batch.signal,
    );
  } catch (error) {
    return hookFailed(error);
  }
  if (!isPendingHookResult(answer)) {
    return decide(answer);
  }
  const interrupted$ = batch.interruption.reason$.pipe(
    take(1),
    map((reason) => failed(reason, true)),
  );
  const decision$ = fromHookResult(answer).pipe(
    map(decide),
    catchError((error: unknown) => of(hookFailed(error))),
  );
  return race(interrupted$, decision$);
}
