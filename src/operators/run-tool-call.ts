import { catchError, concatMap, from, isObservable, map, Observable, of, race, type Subscription, take } from "rxjs";
import { errorText } from "../errors.js";
import { errorResult, isToolResult } from "../tools/tool-results.js";
import type { AfterToolCallResult, AgentEvent, AgentToolResult } from "../types.js";
import { fromHookResult } from "./from-hook-result.js";
import { FinalizedToolCall, type PreparedToolCall, type ToolBatch } from "./tool-batch.js";

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
  const { index, toolCall, tool, args } = prepared;
  return new Observable<AgentEvent | FinalizedToolCall>((subscriber) => {
    // Created only when the tool reads its signal: most tools never do, and an AbortController
    // is the costliest object of a call. A signal read after the call ended comes back aborted.
    let controller: AbortController | undefined;
    let abortReason: Error | undefined;
    const abort = (reason: Error) => {
      abortReason ??= reason;
      controller?.abort(reason);
    };
    const teardowns: (Subscription | (() => void))[] = [];
    let settled = false;

    const finish = (result: AgentToolResult, isError: boolean, interrupted = false) => {
      if (settled) return;
      settled = true;
      subscriber.next(new FinalizedToolCall(index, toolCall, result, isError, interrupted));
      subscriber.complete();
    };
    const fail = (message: string, interrupted = false) => {
      abort(new Error(message));
      finish(errorResult(message), true, interrupted);
    };
    const update = (partialResult: unknown) => {
      if (settled) return;
      subscriber.next({
        type: "tool_execution_update",
        toolCallId: toolCall.id,
        toolName: toolCall.name,
        args: toolCall.arguments,
        partialResult,
      });
    };
    const finishWith = (value: unknown, hasValue: boolean) => {
      if (hasValue && isToolResult(value)) {
        finish(value, false);
      } else {
        const returned = hasValue ? "something that is not a tool result ({ content: [...], details })" : "no result";
        finish(errorResult(`Tool "${toolCall.name}" returned ${returned}.`), true);
      }
    };

    teardowns.push(batch.interruption.onInterrupt((reason) => fail(reason, true)));
    if (tool.timeoutMs !== undefined && !settled) {
      const timeoutMs = tool.timeoutMs;
      teardowns.push(batch.scheduler.schedule(() => fail(`Tool "${toolCall.name}" timed out after ${timeoutMs} ms`), timeoutMs));
    }
    if (!settled) {
      let output: unknown;
      let threw = false;
      try {
        output = tool.execute(toolCall.id, args as never, {
          get signal() {
            if (!controller) {
              controller = new AbortController();
              if (abortReason) controller.abort(abortReason);
            }
            return controller.signal;
          },
          update,
        });
      } catch (error) {
        threw = true;
        finish(errorResult(errorText(error)), true);
      }
      if (!threw && !settled) {
        if (isObservable(output)) {
          const failWith = (error: unknown) => finish(errorResult(errorText(error)), true);
          teardowns.push(subscribeWithProgress(output, batch, update, failWith, finishWith));
        } else if (typeof (output as PromiseLike<unknown> | null)?.then === "function") {
          teardowns.push(
            from(output as PromiseLike<unknown>).subscribe({
              next: (value) => finishWith(value, true),
              error: (error: unknown) => finish(errorResult(errorText(error)), true),
            }),
          );
        } else {
          finishWith(output, true);
        }
      }
    }
    return () => {
      for (const teardown of teardowns) {
        if (typeof teardown === "function") teardown();
        else teardown.unsubscribe();
      }
      if (!settled) abort(new Error("Tool call was cancelled"));
    };
  });
}

/**
 * Subscribes to a tool's Observable output. A value is progress only if more follows: it is
 * reported when the next value (or an error) arrives or the scheduler next gets a turn, and
 * dropped when the Observable completes first, because then it is the result (so `of(result)`
 * reports no progress).
 */
function subscribeWithProgress(
  output: Observable<unknown>,
  batch: ToolBatch,
  update: (partialResult: unknown) => void,
  failWith: (error: unknown) => void,
  finishWith: (value: unknown, hasValue: boolean) => void,
): Subscription {
  let lastValue: unknown;
  let hasValue = false;
  let pendingProgress: { value: unknown } | undefined;
  let progressAction: Subscription | undefined;
  const reportPendingProgress = () => {
    progressAction?.unsubscribe();
    progressAction = undefined;
    const pending = pendingProgress;
    pendingProgress = undefined;
    if (pending) update(pending.value);
  };
  const subscription = output.subscribe({
    next: (value) => {
      lastValue = value;
      hasValue = true;
      reportPendingProgress();
      pendingProgress = { value };
      progressAction = batch.scheduler.schedule(reportPendingProgress);
    },
    error: (error: unknown) => {
      reportPendingProgress();
      failWith(error);
    },
    complete: () => {
      progressAction?.unsubscribe();
      pendingProgress = undefined;
      finishWith(lastValue, hasValue);
    },
  });
  subscription.add(() => progressAction?.unsubscribe());
  return subscription;
}

function afterToolCall(executed: FinalizedToolCall, prepared: PreparedToolCall, batch: ToolBatch): Observable<FinalizedToolCall> {
  const hook = batch.config.afterToolCall;
  if (!hook || executed.interrupted) return of(executed);
  const { index, toolCall } = executed;
  const hookFailed = (error: unknown) =>
    new FinalizedToolCall(index, toolCall, errorResult(`afterToolCall failed for tool "${toolCall.name}": ${errorText(error)}`), true);
  const amend = (override: AfterToolCallResult | undefined): FinalizedToolCall => {
    if (!override) return executed;
    const result: AgentToolResult = {
      content: override.content ?? executed.result.content,
      details: override.details ?? executed.result.details,
    };
    const terminate = override.terminate ?? executed.result.terminate;
    if (terminate !== undefined) result.terminate = terminate;
    return new FinalizedToolCall(index, toolCall, result, override.isError ?? executed.isError);
  };
  let answer: ReturnType<typeof hook>;
  try {
    answer = hook(
      {
        assistantMessage: batch.assistantMessage,
        toolCall,
        args: prepared.args,
        result: executed.result,
        isError: executed.isError,
        context: batch.context,
      },
      batch.signal,
    );
  } catch (error) {
    return of(hookFailed(error));
  }
  if (!isObservable(answer) && typeof (answer as PromiseLike<unknown> | undefined)?.then !== "function") {
    return of(amend(answer as AfterToolCallResult | undefined));
  }
  const interrupted$ = batch.interruption.reason$.pipe(
    take(1),
    map((reason) => new FinalizedToolCall(index, toolCall, errorResult(reason), true, true)),
  );
  const amended$ = fromHookResult(answer).pipe(
    map(amend),
    catchError((error: unknown) => of(hookFailed(error))),
  );
  return race(interrupted$, amended$);
}
