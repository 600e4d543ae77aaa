import { Observable, of } from "rxjs";
import { errorText } from "../../errors.js";
import { errorResult } from "../../tools/tool-results.js";
import { jsonDepthOf } from "../../util/json-depth.js";
import type { AfterToolCallResult } from "../../types.js";
import { overrideResult } from "./after-tool-call-override.js";
import { answerOfHook } from "./answer-of-hook.js";
import { FinalizedToolCall, type PreparedToolCall, type ToolBatch } from "./tool-batch.js";

/**
 * Lets `afterToolCall` amend an executed call's result, field by field.
 *
 * Emits one `FinalizedToolCall`, then completes: the executed one when there is no hook, the
 * call was interrupted (abort, steering) or the hook answers nothing; the amended one otherwise;
 * an error result when the hook throws, rejects or answers something that is not an override
 * (one nested deeper than `maxJsonDepth` included).
 * A hook that answers with a Promise or an Observable loses to the batch's interruption. A plain
 * answer or a throw is the outcome synchronously.
 */
export function afterToolCall(executed: FinalizedToolCall, prepared: PreparedToolCall, batch: ToolBatch): Observable<FinalizedToolCall> {
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
        const overridden = overrideResult(executed.result, executed.isError, override, jsonDepthOf(batch.config));
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
