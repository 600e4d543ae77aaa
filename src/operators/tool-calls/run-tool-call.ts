import { concatMap, isObservable, Observable, of, type Subscriber, type Subscription, type TeardownLogic } from "rxjs";
import type { AgentEvent, AgentToolResult } from "../../types.js";
import { afterToolCall } from "./after-tool-call.js";
import { isPromiseLike } from "../../util/is-promise-like.js";
import { progressUntilLast } from "../progress-until-last.js";
import { toolDeadlinesOf } from "./tool-deadlines.js";
import { toolTimeoutMs } from "./tool-timeout.js";
import { FinalizedToolCall, type PreparedToolCall, type ToolBatch } from "./tool-batch.js";
import { ToolExecution } from "./tool-execution.js";

/**
 * Runs one prepared tool call, then lets `afterToolCall` amend its result (after-tool-call.ts).
 *
 * Emits a `tool_execution_update` per progress report, then one `FinalizedToolCall`. Progress is
 * each `update` call, reported at once, and each value of a tool's Observable that more follows
 * (`progressUntilLast`).
 *
 * The tool's signal fires on interruption (abort, steering), on timeout and on unsubscribe while
 * it still runs; the call is finalized at that moment with an error result, without waiting for
 * the tool to notice. A cancel of this call fires its signal too, and the tool's own result
 * stands if it settles while the signal fires; otherwise the cancel's error result. A call
 * cancelled before its start emits nothing (the batch settled it then). A tool that returns a
 * plain value is finalized synchronously.
 */
export function runToolCall(prepared: PreparedToolCall, batch: ToolBatch): Observable<AgentEvent | FinalizedToolCall> {
  const executed$ = new ToolCallRun(prepared, batch);
  // Without the hook, no operator: most runs have none, and each call would pay for it.
  if (!batch.config.afterToolCall) return executed$;
  return executed$.pipe(
    concatMap((output) => (output instanceof FinalizedToolCall ? afterToolCall(output, prepared, batch) : of(output))),
  );
}

/**
 * The call's execution, run on subscribe. Why a subclass with a static subscribe function rather
 * than `new Observable` with a closure: the closure and its context were an allocation per call
 * (as `SettleOnce` does for the result slots).
 */
class ToolCallRun extends Observable<AgentEvent | FinalizedToolCall> {
  constructor(
    private readonly prepared: PreparedToolCall,
    private readonly batch: ToolBatch,
  ) {
    super(ToolCallRun.execute);
  }

  private static execute(this: Observable<AgentEvent | FinalizedToolCall>, subscriber: Subscriber<AgentEvent | FinalizedToolCall>): TeardownLogic {
    const { prepared, batch } = this as ToolCallRun;
    return executeTool(prepared, batch, subscriber);
  }
}

function executeTool(prepared: PreparedToolCall, batch: ToolBatch, subscriber: Subscriber<AgentEvent | FinalizedToolCall>): TeardownLogic {
  const { toolCall, tool, args } = prepared;
  if (batch.cancellations?.messageFor(toolCall.id) !== undefined) {
    subscriber.complete();
    return undefined;
  }
  const execution = new ToolExecution(prepared, subscriber, batch);
  const interruptedBefore = batch.interruption.reason;
  if (interruptedBefore !== undefined) {
    execution.stop(interruptedBefore, true, batch.interruption.cause);
    return undefined;
  }
  let output: unknown;
  execution.starting = true;
  try {
    const observe = batch.config.observeToolCall;
    output = observe ? observe(toolCall, () => tool.execute(toolCall.id, args as never, execution)) : tool.execute(toolCall.id, args as never, execution);
  } catch (error) {
    execution.failWithError(error);
  }
  execution.starting = false;
  if (execution.settled) return execution.teardownLogic();
  let kind: OutputKind;
  try {
    kind = outputKind(output);
  } catch (error) {
    // Telling what it returned ran the tool's own code (a Proxy's traps, a `then` getter).
    execution.failWithError(error);
    return execution.teardownLogic();
  }
  if (kind === "value") {
    // An interruption that came while the tool ran wins over what it returned, as it would
    // over a Promise's value.
    const interruptedMeanwhile = batch.interruption.reason;
    if (interruptedMeanwhile !== undefined) execution.stop(interruptedMeanwhile, true, batch.interruption.cause);
    else execution.finishWithValue(output, true);
    return execution.teardownLogic();
  }
  // Listening only now: a tool that answered synchronously never needs it, and one that is
  // interrupted while it ran hears it at once (the interruption replays its reason).
  execution.listenTo(batch.interruption, batch.cancellations);
  if (execution.settled) return execution.teardownLogic();
  // Armed only now, for the same reason: a plain synchronous tool costs no timer. The limit
  // counts from the call's start all the same, since no virtual time passed while it ran.
  const timeoutMs = toolTimeoutMs(prepared, batch.config);
  if (timeoutMs !== undefined) execution.limitTo(timeoutMs, toolDeadlinesOf(batch.deadlinesOwner, batch.scheduler));
  if (kind === "observable") {
    // Typed by ToolExecuteResult; the last value is checked by finishWithValue like any result.
    execution.addTeardown(subscribeToOutput(output as Observable<AgentToolResult>, batch, execution));
    return execution.teardownLogic();
  }
  // Why `then` and not `from`: a Promise cannot be cancelled, so a subscription would only
  // cost; a value or failure that comes after the call ended is ignored by `settle`.
  // A thenable's own `then` may throw: that is the tool's failure, not the batch's.
  // Why the handlers catch for themselves (`resolved`) rather than a second `then` on the
  // Promise they return: that was one Promise, one closure and one microtask more per call.
  try {
    (output as PromiseLike<unknown>).then(
      (value) => execution.resolved(value),
      (error: unknown) => execution.failWithError(error),
    );
  } catch (error) {
    execution.failWithError(error);
  }
  return execution.teardownLogic();
}

type OutputKind = "value" | "observable" | "promise";

function outputKind(output: unknown): OutputKind {
  if (isObservable(output)) return "observable";
  return isPromiseLike(output) ? "promise" : "value";
}

/** Subscribes the execution to a tool's Observable output: its progress, then its last value as the result. */
function subscribeToOutput(output: Observable<AgentToolResult>, batch: ToolBatch, execution: ToolExecution): Subscription {
  return output.pipe(progressUntilLast(batch.scheduler)).subscribe({
    next: (notification) => {
      if (notification.type === "progress") execution.report(notification.value);
      else execution.finishWithValue(notification.value, notification.hasValue);
    },
    error: (error: unknown) => execution.failWithError(error),
  });
}
