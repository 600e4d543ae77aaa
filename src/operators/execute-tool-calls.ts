import {
  AsyncSubject,
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
  ReplaySubject,
  Subscription,
  take,
  type SchedulerLike,
} from "rxjs";
import type { AgentContext, AgentEvent, AgentLoopConfig, AssistantMessage, DrainableQueue, ToolCall, ToolResultMessage } from "../types.js";
import { mergeMapCapped } from "./merge-map-capped.js";
import { prepareToolCall } from "./prepare-tool-call.js";
import { runToolCall } from "./run-tool-call.js";
import {
  ABORTED_TOOL_TEXT,
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
    const interruption = new ReplaySubject<string>(1);
    const steeringInterrupts$ = !config.steeringInterruptsTools
      ? EMPTY
      : steering.peek().length > 0
        ? of(STEERING_SKIP_TEXT)
        : steering.arrivals.pipe(map(() => STEERING_SKIP_TEXT));
    // A Subscription of its own: the trigger's take(1) closes its subscription as it fires, and
    // the batch, perhaps mid-emission when the abort comes re-entrantly, must not close with it.
    const subscription = new Subscription();
    subscription.add(
      merge(options.abort$.pipe(map(() => ABORTED_TOOL_TEXT)), steeringInterrupts$).pipe(take(1)).subscribe(interruption),
    );

    const batch: ToolBatch = {
      assistantMessage,
      context,
      config,
      scheduler,
      signal: options.signal,
      interruption: interruption.asObservable(),
    };
    const slots = toolCalls.map(() => new AsyncSubject<ToolResultMessage>());
    const results: ToolResultMessage[] = [];
    const terminates: boolean[] = [];
    const settle = (finalized: FinalizedToolCall): Observable<AgentEvent> => {
      const end: AgentEvent = {
        type: "tool_execution_end",
        toolCallId: finalized.toolCall.id,
        toolName: finalized.toolCall.name,
        result: finalized.result,
        isError: finalized.isError,
      };
      return concat(
        of(end),
        defer(() => {
          const slot = slots[finalized.index]!;
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
          slot.next(message);
          slot.complete();
          return EMPTY;
        }),
      );
    };
    const settleOutput = (output: AgentEvent | PreparedToolCall | FinalizedToolCall): Observable<AgentEvent> =>
      output instanceof FinalizedToolCall
        ? settle(output)
        : output instanceof PreparedToolCall
          ? runToolCall(output, batch).pipe(concatMap(settleOutput))
          : of(output);

    const sequential =
      config.toolExecution === "sequential" ||
      toolCalls.some((call) => context.tools?.some((tool) => tool.name === call.name && tool.executionMode === "sequential"));
    const prepared$ = from(toolCalls).pipe(concatMap((toolCall, index) => prepareToolCall(index, toolCall, batch)));
    const processed$ = sequential
      ? from(toolCalls).pipe(
          concatMap((toolCall, index) => prepareToolCall(index, toolCall, batch).pipe(concatMap(settleOutput))),
        )
      : prepared$.pipe(
          connect((shared$) =>
            merge(
              shared$.pipe(
                filter((output) => !(output instanceof PreparedToolCall)),
                concatMap(settleOutput),
              ),
              shared$.pipe(
                filter((output): output is PreparedToolCall => output instanceof PreparedToolCall),
                fanOut(settleOutput, config.maxConcurrency ?? Infinity, context),
              ),
            ),
          ),
        );
    const ordered$ = from(slots).pipe(
      concatMap((slot) => slot),
      concatMap((message): AgentEvent[] => [
        { type: "message_start", message },
        { type: "message_end", message },
      ]),
    );
    const summary$ = defer(() => of(new ToolBatchSummary(results, terminates.length > 0 && terminates.every(Boolean))));
    subscription.add(concat(merge(ordered$, processed$), summary$).subscribe(subscriber));
    return subscription;
  });
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
