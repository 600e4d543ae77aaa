import { concat, concatMap, from, mergeMap, NEVER, Observable, of, Subject, Subscription, type SchedulerLike } from "rxjs";
import { errorText } from "../../errors.js";
import type { AgentContext, AgentEvent, AgentLoopConfig, ApprovalDecision, AssistantMessage, DrainableQueue, ToolCall, ToolCallCancellation, ToolResultMessage } from "../../types.js";
import type { Cancellation } from "../../util/lazy-abort-controller.js";
import { errorResult } from "../../tools/tool-results.js";
import { announceSlotWaits, type SlotWaits } from "./announce-slot-waits.js";
import { awaitApproval, CallApprovals } from "./await-approval.js";
import { CallCancellations } from "./call-cancellations.js";
import { forwardingObserver } from "../forwarding-observer.js";
import { mergeMapCapped } from "../merge-map-capped.js";
import { prepareToolCall, prepareToolCalls } from "./prepare-tool-call.js";
import { ResultSlot } from "./result-slot.js";
import { runToolCall } from "./run-tool-call.js";
import { ToolDeadlines } from "./tool-deadlines.js";
import { toolResultMessage } from "./tool-result-message.js";
import {
  ABORTED_TOOL_TEXT,
  BatchInterruption,
  FinalizedToolCall,
  PreparedToolCall,
  STEERING_SKIP_TEXT,
  ToolBatchSummary,
  type ToolBatch,
  type ToolCallArrival,
} from "./tool-batch.js";

export interface ExecuteToolCallsOptions {
  context: AgentContext;
  config: AgentLoopConfig;
  scheduler: SchedulerLike;
  /** The run's abort: checked before each call, its signal handed to hooks. */
  cancellation: Cancellation;
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
 *
 * With `config.cancellations`, the batch subscribes to it once: a cancelled call that runs hears
 * it through its signal (run-tool-call.ts); one started but not running yet (waiting for
 * `beforeToolCall` or a concurrency slot) gets its `tool_execution_end` at once and never runs;
 * one not started yet is settled as soon as it is, without running.
 *
 * With `arrivals` (eager execution, eager-tool-calls.ts), the batch starts before its message has
 * ended: each arrival appends calls to `toolCalls` (and replaces `assistantMessage`), and the
 * batch ends only once `arrivals` has completed and every call is done. Such a batch runs in
 * parallel mode; its feeder keeps a sequential remainder to one call at a time.
 */
export function executeToolCalls(
  assistantMessage: AssistantMessage,
  toolCalls: ToolCall[],
  options: ExecuteToolCallsOptions,
  arrivals?: Observable<ToolCallArrival>,
): Observable<AgentEvent | ToolBatchSummary> {
  return new Observable<AgentEvent | ToolBatchSummary>((subscriber) => {
    const { config, context, scheduler, steering } = options;
    const interruption = new BatchInterruption();
    // A Subscription of its own: a trigger may fire while the batch is mid-emission, and the
    // batch must not close with the trigger's subscription.
    const subscription = new Subscription();
    // NEVER, a run without a signal: nothing to listen to.
    if (options.abort$ !== NEVER) {
      subscription.add(options.abort$.subscribe(forwardingObserver(subscriber, { next: () => interruption.interrupt(ABORTED_TOOL_TEXT, options.cancellation.reason ?? new Error(ABORTED_TOOL_TEXT)) })));
    }
    // A steering queue that fails can no longer tell whether the user wants the tools to stop:
    // its calls are skipped, and the run ends after this turn (`nextStep`, reason "failed").
    let failure: string | undefined;
    const steeringFailed = (error: unknown) => {
      failure ??= `The steering queue failed: ${errorText(error)}`;
      interruption.interrupt(failure);
    };
    if (config.steeringInterruptsTools) {
      try {
        if (steering.peek().length > 0) interruption.interrupt(STEERING_SKIP_TEXT);
        else {
          const arrivals = forwardingObserver(subscriber, { next: () => interruption.interrupt(STEERING_SKIP_TEXT), error: steeringFailed });
          subscription.add(steering.arrivals.subscribe(arrivals));
        }
      } catch (error) {
        steeringFailed(error);
      }
    }

    const slots = toolCalls.map(() => new ResultSlot());
    const results: ToolResultMessage[] = [];
    const terminates: boolean[] = [];
    const fill = (finalized: FinalizedToolCall) => {
      terminates[finalized.index] = finalized.result.terminate === true;
      const message = toolResultMessage(finalized, scheduler.now());
      results[finalized.index] = message;
      slots[finalized.index]!.fill(message);
    };
    // How many calls have started (`tool_execution_start`): only those may be settled by a cancel.
    let startedCalls = 0;
    // Every event of the batch but the ordered results passes here; a finalized call becomes
    // its `tool_execution_end`, then fills its slot (so its result follows the end).
    const passOn = (output: AgentEvent | FinalizedToolCall) => {
      if (!(output instanceof FinalizedToolCall)) {
        if (output.type === "tool_execution_start") startedCalls += 1;
        subscriber.next(output);
        return;
      }
      // A call cancelled while it waited was settled then; what its preparation says later is moot.
      if (results[output.index] !== undefined) return;
      subscriber.next({
        type: "tool_execution_end",
        toolCallId: output.toolCall.id,
        toolName: output.toolCall.name,
        result: output.result,
        isError: output.isError,
      });
      fill(output);
    };

    let cancellations: CallCancellations | undefined;
    if (config.cancellations) {
      cancellations = new CallCancellations((toolCallId, message) => {
        const index = toolCalls.findIndex((call) => call.id === toolCallId);
        if (index < 0 || index >= startedCalls || results[index] !== undefined) return;
        passOn(new FinalizedToolCall(index, toolCalls[index]!, errorResult(message), true, true));
      });
    }
    const deadlines = new ToolDeadlines(scheduler);
    const batch: ToolBatch = { assistantMessage, context, config, scheduler, cancellation: options.cancellation, interruption, deadlines, cancellations };
    const runCall = (prepared: PreparedToolCall) => runToolCall(prepared, batch);
    // Made only for a batch that may need a person's answer: the others pay nothing for approvals.
    const approvals = context.tools?.some((tool) => tool.needsApproval)
      ? new CallApprovals(config.approvals !== undefined, (toolCallId) => toolCalls.some((call) => call.id === toolCallId))
      : undefined;

    const slotWaits: SlotWaits = { scheduler, cancellation: options.cancellation, passOn, isSettled: (index) => results[index] !== undefined };
    const sequential =
      config.toolExecution === "sequential" ||
      toolCalls.some((call) => context.tools?.some((tool) => tool.name === call.name && tool.executionMode === "sequential"));
    // Eager execution only: the batch grows as calls arrive (see the doc comment).
    let grown: Subject<void> | undefined;
    let arrivedSlots: Subject<ResultSlot> | undefined;
    if (arrivals) {
      grown = new Subject<void>();
      arrivedSlots = new Subject<ResultSlot>();
    }
    const processed$: Observable<AgentEvent | FinalizedToolCall> = sequential
      ? from(toolCalls).pipe(
          concatMap((toolCall, index) =>
            prepareToolCall(index, toolCall, batch).pipe(
              concatMap((output) => {
                if (!(output instanceof PreparedToolCall)) return of(output);
                return approvals ? awaitApproval(output, batch, approvals, passOn).pipe(concatMap(runCall)) : runCall(output);
              }),
            ),
          ),
        )
      : approvals
        ? prepareToolCalls(toolCalls, batch, passOn, grown).pipe(
            mergeMap((prepared) => awaitApproval(prepared, batch, approvals, passOn)),
            fanOut(runCall, config.maxConcurrency ?? Infinity, context, slotWaits),
          )
        : prepareToolCalls(toolCalls, batch, passOn, grown).pipe(fanOut(runCall, config.maxConcurrency ?? Infinity, context, slotWaits));
    // The batch ends when both the ordered results and the processing have completed.
    let running = 2;
    const completeOne = () => {
      running -= 1;
      if (running > 0) return;
      subscriber.next(new ToolBatchSummary(results, terminates.length > 0 && terminates.every(Boolean), failure));
      subscriber.complete();
    };
    const orderedSlots$ = arrivedSlots ? concat(from(slots), arrivedSlots) : from(slots);
    subscription.add(
      orderedSlots$
        .pipe(concatMap((slot) => slot))
        .subscribe(forwardingObserver(subscriber, { next: (event: AgentEvent) => subscriber.next(event), complete: completeOne })),
    );
    if (config.cancellations && cancellations) {
      const batchCancellations = cancellations;
      // A source that fails only stops bringing cancels: the calls have nothing to do with it.
      const observer = forwardingObserver(subscriber, {
        next: (cancellation: ToolCallCancellation) => batchCancellations.cancel(cancellation),
        error: () => undefined,
      });
      subscription.add(config.cancellations.subscribe(observer));
    }
    if (config.approvals && approvals) {
      const batchApprovals = approvals;
      // As with cancels: a source that fails only stops bringing answers (waits then end by timeout or abort).
      const observer = forwardingObserver(subscriber, { next: (decision: ApprovalDecision) => batchApprovals.decide(decision), error: () => undefined });
      subscription.add(config.approvals.subscribe(observer));
    }
    subscription.add(processed$.subscribe(forwardingObserver(subscriber, { next: passOn, complete: completeOne })));
    if (arrivals && grown && arrivedSlots) {
      const [batchGrown, batchSlots] = [grown, arrivedSlots];
      const observer = forwardingObserver(subscriber, {
        next: (arrival: ToolCallArrival) => {
          batch.assistantMessage = arrival.message;
          for (const toolCall of arrival.toolCalls) {
            toolCalls.push(toolCall);
            const slot = new ResultSlot();
            slots.push(slot);
            batchSlots.next(slot);
          }
          // The slots exist before preparation resumes: a call may be settled synchronously.
          batchGrown.next();
        },
        complete: () => {
          batchSlots.complete();
          batchGrown.complete();
        },
      });
      subscription.add(arrivals.subscribe(observer));
    }
    return subscription;
  });
}

/** The calls' fan-out; with a limit, a call that waits for its slot says so (`announceSlotWaits`). */
function fanOut(
  runCall: (prepared: PreparedToolCall) => Observable<AgentEvent | FinalizedToolCall>,
  limit: number,
  context: AgentContext,
  slotWaits: SlotWaits,
) {
  const capped = context.tools?.some((tool) => tool.concurrency !== undefined) ?? false;
  if (!capped) {
    // Without a limit no call waits: nothing to announce, and nothing to pay per call.
    if (limit === Infinity) return mergeMap(runCall);
    return announceSlotWaits((project) => mergeMap(project, limit), runCall, slotWaits);
  }
  const capOf = (prepared: PreparedToolCall) => (prepared.tool.concurrency === undefined ? undefined : { key: prepared.tool.name, cap: prepared.tool.concurrency });
  return announceSlotWaits((project) => mergeMapCapped(project, limit, capOf), runCall, slotWaits);
}
