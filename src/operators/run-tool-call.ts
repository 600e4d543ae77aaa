import { catchError, concatMap, isObservable, map, Observable, of, race, Subscription, take, from } from "rxjs";
import { errorText } from "../errors.js";
import { errorResult, isToolResult } from "../tools/tool-results.js";
import type { AgentEvent, AgentToolResult } from "../types.js";
import { callHook } from "./call-hook.js";
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
 * the tool to notice.
 */
export function runToolCall(prepared: PreparedToolCall, batch: ToolBatch): Observable<AgentEvent | FinalizedToolCall> {
  return executeTool(prepared, batch).pipe(
    concatMap((output) => (output instanceof FinalizedToolCall ? afterToolCall(output, prepared, batch) : of(output))),
  );
}

function executeTool(prepared: PreparedToolCall, batch: ToolBatch): Observable<AgentEvent | FinalizedToolCall> {
  const { index, toolCall, tool, args } = prepared;
  return new Observable<AgentEvent | FinalizedToolCall>((subscriber) => {
    const controller = new AbortController();
    const subscription = new Subscription();
    let settled = false;

    const finish = (result: AgentToolResult, isError: boolean, interrupted = false) => {
      if (settled) return;
      settled = true;
      subscriber.next(new FinalizedToolCall(index, toolCall, result, isError, interrupted));
      subscriber.complete();
    };
    const fail = (message: string, interrupted = false) => {
      controller.abort(new Error(message));
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

    subscription.add(batch.interruption.subscribe((reason) => fail(reason, true)));
    if (tool.timeoutMs !== undefined && !settled) {
      const timeoutMs = tool.timeoutMs;
      subscription.add(
        batch.scheduler.schedule(() => fail(`Tool "${toolCall.name}" timed out after ${timeoutMs} ms`), timeoutMs),
      );
    }
    if (!settled) {
      let output: unknown;
      try {
        output = tool.execute(toolCall.id, args as never, { signal: controller.signal, update });
      } catch (error) {
        finish(errorResult(errorText(error)), true);
      }
      if (!settled) {
        const reportsProgress = isObservable(output);
        const output$: Observable<unknown> = isObservable(output)
          ? output
          : isPromiseLike(output)
            ? from(output)
            : of(output);
        let lastValue: unknown;
        let hasValue = false;
        // A value is progress only if more follows: it is reported when the next value (or an
        // error) arrives or the scheduler next gets a turn, and dropped when the Observable
        // completes first, because then it is the result (so `of(result)` reports no progress).
        let pendingProgress: { value: unknown } | undefined;
        let progressAction: Subscription | undefined;
        const reportPendingProgress = () => {
          progressAction?.unsubscribe();
          progressAction = undefined;
          const pending = pendingProgress;
          pendingProgress = undefined;
          if (pending) update(pending.value);
        };
        subscription.add(
          output$.subscribe({
            next: (value) => {
              lastValue = value;
              hasValue = true;
              if (!reportsProgress) return;
              reportPendingProgress();
              pendingProgress = { value };
              progressAction = batch.scheduler.schedule(reportPendingProgress);
              subscription.add(progressAction);
            },
            error: (error: unknown) => {
              reportPendingProgress();
              finish(errorResult(errorText(error)), true);
            },
            complete: () => {
              progressAction?.unsubscribe();
              pendingProgress = undefined;
              if (hasValue && isToolResult(lastValue)) {
                finish(lastValue, false);
              } else {
                finish(
                  errorResult(
                    `Tool "${toolCall.name}" returned ${hasValue ? "something that is not a tool result ({ content: [...], details })" : "no result"}.`,
                  ),
                  true,
                );
              }
            },
          }),
        );
      }
    }
    return () => {
      subscription.unsubscribe();
      if (!settled) controller.abort(new Error("Tool call was cancelled"));
    };
  });
}

function afterToolCall(
  executed: FinalizedToolCall,
  prepared: PreparedToolCall,
  batch: ToolBatch,
): Observable<FinalizedToolCall> {
  const hook = batch.config.afterToolCall;
  if (!hook || executed.interrupted) {
    return of(executed);
  }
  const { index, toolCall } = executed;
  const amended$ = callHook(
    hook,
    {
      assistantMessage: batch.assistantMessage,
      toolCall,
      args: prepared.args,
      result: executed.result,
      isError: executed.isError,
      context: batch.context,
    },
    batch.signal,
  ).pipe(
    map((override) => {
      if (!override) return executed;
      const result: AgentToolResult = {
        content: override.content ?? executed.result.content,
        details: override.details ?? executed.result.details,
      };
      const terminate = override.terminate ?? executed.result.terminate;
      if (terminate !== undefined) result.terminate = terminate;
      return new FinalizedToolCall(index, toolCall, result, override.isError ?? executed.isError);
    }),
    catchError((error: unknown) =>
      of(
        new FinalizedToolCall(
          index,
          toolCall,
          errorResult(`afterToolCall failed for tool "${toolCall.name}": ${errorText(error)}`),
          true,
        ),
      ),
    ),
  );
  const interrupted$ = batch.interruption.pipe(
    take(1),
    map((reason) => new FinalizedToolCall(index, toolCall, errorResult(reason), true, true)),
  );
  return race(interrupted$, amended$);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
