import { catchError, concatMap, isObservable, map, Observable, of, race, Subscription, take, from } from "rxjs";
import { errorText } from "../errors.js";
import { errorResult, isToolResult } from "../tools/tool-results.js";
import type { AgentEvent, AgentToolResult } from "../types.js";
import { callHook } from "./call-hook.js";
import { FinalizedToolCall, type PreparedToolCall, type ToolBatch } from "./tool-batch.js";

/**
 * Runs one prepared tool call, then lets `afterToolCall` amend its result.
 *
 * Emits a `tool_execution_update` per progress report (each `update` call, and each value of a
 * tool that returns an Observable), then one `FinalizedToolCall`. The tool's signal fires on
 * interruption (abort, steering), on timeout and on unsubscribe while it still runs; the call is
 * finalized at that moment with an error result, without waiting for the tool to notice.
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
        subscription.add(
          output$.subscribe({
            next: (value) => {
              lastValue = value;
              hasValue = true;
              if (reportsProgress) update(value);
            },
            error: (error: unknown) => finish(errorResult(errorText(error)), true),
            complete: () => {
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
