import {
  concat,
  concatMap,
  connect,
  defer,
  EMPTY,
  filter,
  from,
  map,
  merge,
  mergeMap,
  Observable,
  of,
  Subscription,
  take,
  type SchedulerLike,
} from "rxjs";
import type { AgentContext, AgentEvent, AgentLoopConfig, AssistantMessage, DrainableQueue, ToolCall, ToolResultMessage } from "../types.js";
import { mergeMapCapped } from "./merge-map-capped.js";
import { prepareToolCall } from "./prepare-tool-call.js";
import { ResultSlot } from "./result-slot.js";
import { runToolCall } from "./run-tool-call.js";
import {
  ABORTED_TOOL_TEXT,
  BatchInterruption,
  FinalizedToolCall,
  PreparedToolCall,
  STEERING_SKIP_TEXT,
  ToolBatchSummary,
  type ToolBatch,
} from "./tool-batch.js";

export interface ExecuteToolCallsOptions {
  context: AgentContext;
  config: AgentLoopConfig;
  scheduler: SchedulerLike;
  signal: AbortSignal;
  abort$: Observable<void>;
  steering: DrainableQueue;
}

/**
 * Runs one assistant message's tool calls and emits their events, then a `ToolBatchSummary`.
 *
 * Calls are prepared one at a time in source order (`beforeToolCall` may wait for a person),
 * then fan out with `mergeMap` under `maxConcurrency` and each tool's own `concurrency`.
 * `tool_execution_end` is emitted as each call finishes; the `toolResult` messages are emitted in
 * source order through `concatMap` over one slot per call, the result for call k as soon as
 * calls 0..k are done. Sequential mode (config, or any tool of the batch) runs each call to its
 * end before preparing the next. Every call gets exactly one result, also on abort.
 */
export function executeToolCalls(
  assistantMessage: AssistantMessage,
  toolCalls: ToolCall[],
  options: ExecuteToolCallsOptions,
): Observable<AgentEvent | ToolBatchSummary> {
  return new Observable<AgentEvent | ToolBatchSummary>((subscriber) => {
    const { config, context, scheduler, steering } = options;
    const interruption = new BatchInterruption();
    const steeringInterrupts$ = !config.steeringInterruptsTools
      ? EMPTY
      : steering.peek().length > 0
        ? of(STEERING_SKIP_TEXT)
        : steering.arrivals.pipe(map(() => STEERING_SKIP_TEXT));
    // A Subscription of its own: the trigger's take(1) closes its subscription as it fires, and
    // the batch, perhaps mid-emission when the abort comes re-entrantly, must not close with it.
    const subscription = new Subscription();
    subscription.add(
      merge(options.abort$.pipe(map(() => ABORTED_TOOL_TEXT)), steeringInterrupts$)
        .pipe(take(1))
        .subscribe((reason) => interruption.interrupt(reason)),
    );

    const batch: ToolBatch = { assistantMessage, context, config, scheduler, signal: options.signal, interruption };
    const slots = toolCalls.map(() => new ResultSlot());
    const results: ToolResultMessage[] = [];
    const terminates: boolean[] = [];
    const fill = (finalized: FinalizedToolCall) => {
      terminates[finalized.index] = finalized.result.terminate === true;
      const message: ToolResultMessage = {
        role: "toolResult",
        toolCallId: finalized.toolCall.id,
        toolName: finalized.toolCall.name,
        content: finalized.result.content,
        details: finalized.result.details,
        isError: finalized.isError,
        timestamp: scheduler.now(),
      };
      results[finalized.index] = message;
      slots[finalized.index]!.fill(message);
    };
    const settle = settleInto(fill);
    const run = (prepared: PreparedToolCall) => settle(runToolCall(prepared, batch));

    const sequential =
      config.toolExecution === "sequential" ||
      toolCalls.some((call) => context.tools?.some((tool) => tool.name === call.name && tool.executionMode === "sequential"));
    const processed$ = sequential
      ? from(toolCalls).pipe(
          concatMap((toolCall, index) =>
            prepareToolCall(index, toolCall, batch).pipe(
              concatMap((output) => (output instanceof PreparedToolCall ? run(output) : settle(of(output)))),
            ),
          ),
        )
      : from(toolCalls).pipe(
          concatMap((toolCall, index) => prepareToolCall(index, toolCall, batch)),
          connect((shared$) =>
            merge(
              settle(shared$.pipe(filter((output): output is AgentEvent | FinalizedToolCall => !(output instanceof PreparedToolCall)))),
              shared$.pipe(
                filter((output): output is PreparedToolCall => output instanceof PreparedToolCall),
                fanOut(run, config.maxConcurrency ?? Infinity, context),
              ),
            ),
          ),
        );
    const ordered$ = from(slots).pipe(concatMap((slot) => slot.events));
    const summary$ = defer(() => of(new ToolBatchSummary(results, terminates.length > 0 && terminates.every(Boolean))));
    subscription.add(concat(merge(ordered$, processed$), summary$).subscribe(subscriber));
    return subscription;
  });
}

/**
 * Passes events through and turns each `FinalizedToolCall` into its `tool_execution_end`, then
 * hands it to `fill` (which settles the call's result slot).
 */
function settleInto(fill: (finalized: FinalizedToolCall) => void) {
  return (source: Observable<AgentEvent | FinalizedToolCall>): Observable<AgentEvent> =>
    new Observable<AgentEvent>((subscriber) =>
      source.subscribe({
        next: (output) => {
          if (!(output instanceof FinalizedToolCall)) {
            subscriber.next(output);
            return;
          }
          subscriber.next({
            type: "tool_execution_end",
            toolCallId: output.toolCall.id,
            toolName: output.toolCall.name,
            result: output.result,
            isError: output.isError,
          });
          fill(output);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
}

function fanOut(
  run: (prepared: PreparedToolCall) => Observable<AgentEvent>,
  limit: number,
  context: AgentContext,
) {
  const capped = context.tools?.some((tool) => tool.concurrency !== undefined) ?? false;
  if (!capped) {
    return mergeMap(run, limit);
  }
  return mergeMapCapped(run, limit, (prepared: PreparedToolCall) =>
    prepared.tool.concurrency === undefined ? undefined : { key: prepared.tool.name, cap: prepared.tool.concurrency },
  );
}
