import { concatMap, isObservable, Observable, of, type Subscriber, type Subscription } from "rxjs";
import { errorText } from "../errors.js";
import { errorResult, isToolResult } from "../tools/tool-results.js";
import type { AfterToolCallResult, AgentEvent, AgentToolResult, ToolExecutionContext } from "../types.js";
import { overrideResult } from "./after-tool-call-override.js";
import { answerOfHook } from "./answer-of-hook.js";
import { isPromiseLike } from "./from-hook-result.js";
import { type BatchInterruption, FinalizedToolCall, type InterruptionListener, type PreparedToolCall, type ToolBatch } from "./tool-batch.js";

/**
 * Runs one prepared tool call, then lets `afterToolCall` amend its result.
 *
 * Emits a `tool_execution_update` per progress report, then one `FinalizedToolCall`. Progress is
 * each `update` call, reported at once, and each value of a tool's Observable that more follows:
 * reported when the next value (or an error) arrives or the scheduler next gets a turn, and
 * dropped if the Observable completes first, because then it is the result.
 *
 * The tool's signal fires on interruption (abort, steering), on timeout and on unsubscribe while
 * it still runs; the call is finalized at that moment with an error result, without waiting for
 * the tool to notice. A tool that returns a plain value is finalized synchronously.
 */
export function runToolCall(prepared: PreparedToolCall, batch: ToolBatch): Observable<AgentEvent | FinalizedToolCall> {
  const executed$ = executeTool(prepared, batch);
  if (!batch.config.afterToolCall) return executed$;
  return executed$.pipe(
    concatMap((output) => (output instanceof FinalizedToolCall ? afterToolCall(output, prepared, batch) : of(output))),
  );
}

function executeTool(prepared: PreparedToolCall, batch: ToolBatch): Observable<AgentEvent | FinalizedToolCall> {
  const { toolCall, tool, args } = prepared;
  return new Observable<AgentEvent | FinalizedToolCall>((subscriber) => {
    const run = new ToolRun(prepared, subscriber);
    const interruptedBefore = batch.interruption.reason;
    if (interruptedBefore !== undefined) {
      run.fail(interruptedBefore, true);
      return undefined;
    }
    if (tool.timeoutMs !== undefined) {
      const timeoutMs = tool.timeoutMs;
      run.addTeardown(batch.scheduler.schedule(() => run.fail(`Tool "${toolCall.name}" timed out after ${timeoutMs} ms`), timeoutMs));
    }
    let output: unknown;
    try {
      output = tool.execute(toolCall.id, args as never, run);
    } catch (error) {
      run.failWith(error);
    }
    if (run.settled) return run.teardownLogic();
    if (!isObservable(output) && !isPromiseLike(output)) {
      // An interruption that came while the tool ran wins over what it returned, as it would
      // over a Promise's value.
      const interruptedMeanwhile = batch.interruption.reason;
      if (interruptedMeanwhile !== undefined) run.fail(interruptedMeanwhile, true);
      else run.finishWith(output, true);
      return run.teardownLogic();
    }
    // Listening only now: a tool that answered synchronously never needs it, and one that is
    // interrupted while it ran hears it at once (the interruption replays its reason).
    run.listenTo(batch.interruption);
    if (run.settled) return run.teardownLogic();
    if (isObservable(output)) {
      run.addTeardown(subscribeWithProgress(output, batch, run));
    } else if (isPromiseLike(output)) {
      // Why `then` and not `from`: a Promise cannot be cancelled, so a subscription would only
      // cost; a value or failure that comes after the call ended is ignored by `finish`.
      // A thenable's own `then` may throw: that is the tool's failure, not the batch's.
      try {
        output.then(
          (value) => run.finishWith(value, true),
          (error: unknown) => run.failWith(error),
        );
      } catch (error) {
        run.failWith(error);
      }
    }
    return run.teardownLogic();
  });
}

/**
 * One execution of a tool: the context the tool gets (`signal`, `update`) and the settlement of
 * the call. Why a class: a call is the hot path of a batch, and one object with its methods on
 * the prototype replaces a handful of closures per call.
 */
class ToolRun implements ToolExecutionContext, InterruptionListener {
  settled = false;
  // Created only when the tool reads its signal: most tools never do, and an AbortController
  // is the costliest object of a call. A signal read after the call ended comes back aborted.
  private controller: AbortController | undefined;
  private abortReason: Error | undefined;
  private boundUpdate: ((partialResult: unknown) => void) | undefined;
  private teardowns: (Subscription | (() => void))[] | undefined;
  private interruption: BatchInterruption | undefined;

  constructor(
    private readonly prepared: PreparedToolCall,
    private readonly subscriber: Subscriber<AgentEvent | FinalizedToolCall>,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** Bound once, so a tool may destructure it: `execute(id, args, { update })`. */
  get update(): (partialResult: unknown) => void {
    return (this.boundUpdate ??= (partialResult) => this.report(partialResult));
  }

  report(partialResult: unknown): void {
    if (this.settled) return;
    const { toolCall } = this.prepared;
    this.subscriber.next({
      type: "tool_execution_update",
      toolCallId: toolCall.id,
      toolName: toolCall.name,
      args: toolCall.arguments,
      partialResult,
    });
  }

  finish(result: AgentToolResult, isError: boolean, interrupted = false): void {
    if (this.settled || this.subscriber.closed) return;
    this.settled = true;
    const { index, toolCall } = this.prepared;
    this.subscriber.next(new FinalizedToolCall(index, toolCall, result, isError, interrupted));
    this.subscriber.complete();
  }

  /** Finishes with what the tool returned, or with an error saying it was not a result. */
  finishWith(value: unknown, hasValue: boolean): void {
    if (hasValue && isToolResult(value)) {
      this.finish(value, false);
      return;
    }
    const returned = hasValue ? "something that is not a tool result ({ content: [...], details })" : "no result";
    this.finish(errorResult(`Tool "${this.prepared.toolCall.name}" returned ${returned}.`), true);
  }

  /** Finishes with the tool's own failure (a throw, a rejection, an Observable error). */
  failWith(error: unknown): void {
    this.finish(errorResult(errorText(error)), true);
  }

  /** Stops the call from outside (interruption, timeout): its signal fires, it gets `message`. */
  fail(message: string, interrupted = false): void {
    this.abort(new Error(message));
    this.finish(errorResult(message), true, interrupted);
  }

  addTeardown(teardown: Subscription | (() => void)): void {
    (this.teardowns ??= []).push(teardown);
  }

  /** What the call's subscription must do when it ends: nothing for a call settled with nothing to release. */
  teardownLogic(): (() => void) | undefined {
    return this.settled && this.teardowns === undefined && this.interruption === undefined ? undefined : () => this.tearDown();
  }

  listenTo(interruption: BatchInterruption): void {
    this.interruption = interruption;
    interruption.listen(this);
  }

  interrupted(reason: string): void {
    this.fail(reason, true);
  }

  tearDown(): void {
    this.interruption?.stopListening(this);
    for (const teardown of this.teardowns ?? []) {
      if (typeof teardown === "function") teardown();
      else teardown.unsubscribe();
    }
    if (!this.settled) this.abort(new Error("Tool call was cancelled"));
  }

  private abort(reason: Error): void {
    this.abortReason ??= reason;
    this.controller?.abort(reason);
  }
}

/**
 * Subscribes to a tool's Observable output. A value is progress only if more follows: it is
 * reported when the next value (or an error) arrives or the scheduler next gets a turn, and
 * dropped when the Observable completes first, because then it is the result (so `of(result)`
 * reports no progress).
 */
function subscribeWithProgress(output: Observable<unknown>, batch: ToolBatch, run: ToolRun): Subscription {
  let lastValue: unknown;
  let hasValue = false;
  // Whether `lastValue` is progress not reported yet. One scheduled flush serves a burst of
  // values: none is made and dropped per value.
  let unreported = false;
  let flush: Subscription | undefined;
  const reportUnreported = () => {
    if (!unreported) return;
    unreported = false;
    run.report(lastValue);
  };
  const subscription = output.subscribe({
    next: (value) => {
      reportUnreported();
      lastValue = value;
      hasValue = true;
      unreported = true;
      flush ??= batch.scheduler.schedule(() => {
        flush = undefined;
        reportUnreported();
      });
    },
    error: (error: unknown) => {
      reportUnreported();
      run.failWith(error);
    },
    complete: () => {
      unreported = false;
      run.finishWith(lastValue, hasValue);
    },
  });
  subscription.add(() => flush?.unsubscribe());
  return subscription;
}

function afterToolCall(executed: FinalizedToolCall, prepared: PreparedToolCall, batch: ToolBatch): Observable<FinalizedToolCall> {
  const hook = batch.config.afterToolCall;
  if (!hook || executed.interrupted) return of(executed);
  const { index, toolCall } = executed;
  const outcome = answerOfHook(
    () =>
      hook(
        {
          assistantMessage: batch.assistantMessage,
          toolCall,
          args: prepared.args,
          result: executed.result,
          isError: executed.isError,
          context: batch.context,
        },
        batch.cancellation.signal,
      ),
    {
      answered: (override: AfterToolCallResult | undefined): FinalizedToolCall => {
        if (override === undefined || override === null) return executed;
        const overridden = overrideResult(executed.result, executed.isError, override);
        if (typeof overridden === "string") {
          return new FinalizedToolCall(index, toolCall, errorResult(`afterToolCall for tool "${toolCall.name}" answered something that is not an override: ${overridden}.`), true);
        }
        return new FinalizedToolCall(index, toolCall, overridden.result, overridden.isError);
      },
      failed: (error) =>
        new FinalizedToolCall(index, toolCall, errorResult(`afterToolCall failed for tool "${toolCall.name}": ${errorText(error)}`), true),
      interrupted: (reason) => new FinalizedToolCall(index, toolCall, errorResult(reason), true, true),
    },
    batch.interruption,
  );
  return outcome instanceof Observable ? outcome : of(outcome);
}
