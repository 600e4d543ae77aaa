import { concatMap, from, mergeMap, NEVER, Observable, of, type OperatorFunction, Subject, type Subscriber, Subscription, type SchedulerLike } from "rxjs";
import { errorText } from "../../errors.js";
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentTool, ApprovalDecision, AssistantMessage, DrainableQueue, ToolCall, ToolCallCancellation } from "../../types.js";
import type { Cancellation } from "../../util/lazy-abort-controller.js";
import { errorResult } from "../../tools/tool-results.js";
import { announceSlotWaits, type SlotWaits } from "./announce-slot-waits.js";
import { awaitApproval, CallApprovals } from "./await-approval.js";
import { BatchResults, type CallOutput } from "./batch-results.js";
import { CallCancellations } from "./call-cancellations.js";
import { forwardingObserver } from "../forwarding-observer.js";
import { mergeMapCapped } from "../merge-map-capped.js";
import { type PreparationOutput, prepareToolCall, prepareToolCalls } from "./prepare-tool-call.js";
import type { ResultSlot } from "./result-slot.js";
import { runToolCall } from "./run-tool-call.js";
import type { ToolDeadlinesOwner } from "./tool-deadlines.js";
import {
  ABORTED_TOOL_TEXT,
  BatchInterruption,
  FinalizedToolCall,
  PreparedToolCall,
  STEERING_SKIP_TEXT,
  type ToolBatch,
  type ToolBatchSummary,
  type ToolCallArrival,
} from "./tool-batch.js";

/**
 * What a batch needs from its run. Its calls' time limits go to the `toolDeadlines` of
 * `deadlinesOwner`, by default of the options themselves (the run's `RunState`): whoever passes
 * them cancels those once it runs no more batches, as the run does when it ends.
 */
export interface ExecuteToolCallsOptions extends ToolDeadlinesOwner {
  /** Where the run's `toolDeadlines` are kept, when the options are a copy of the run. */
  deadlinesOwner?: ToolDeadlinesOwner;
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
    const { config, context, scheduler } = options;
    const interruption = new BatchInterruption();
    const results = new BatchResults(toolCalls.length, scheduler);
    // Why the batch subscribes to its inputs (abort, steering, cancels, answers, arrivals) itself
    // rather than merging them in: they are triggers that never complete, and the batch ends with
    // its calls, not with them. A Subscription of their own: a trigger may fire while the batch
    // is mid-emission, and the batch must not close with the trigger's subscription.
    const inputs = new Subscription();
    const failure = listenForInterruptions(inputs, subscriber, options, interruption);
    const cancellations = config.cancellations
      ? // A cancel comes from outside the calls' stream: a call started but not running yet is settled here, at once.
        new CallCancellations((toolCallId, message) => {
          const index = toolCalls.findIndex((call) => call.id === toolCallId);
          if (index < 0 || index >= results.startedCalls || results.isSettled(index)) return;
          results.settle(new FinalizedToolCall(index, toolCalls[index]!, errorResult(message), true, true), subscriber);
        })
      : undefined;
    const batch: ToolBatch = { assistantMessage, context, config, scheduler, cancellation: options.cancellation, interruption, deadlinesOwner: options.deadlinesOwner ?? options, cancellations };
    // Made only for a batch that may need a person's answer: the others pay nothing for approvals.
    const approvals = context.tools?.some(needsApproval)
      ? new CallApprovals(config.approvals !== undefined, (toolCallId) => toolCalls.some((call) => call.id === toolCallId))
      : undefined;
    listenForAnswers(inputs, subscriber, config, cancellations, approvals);
    // Eager execution only: the batch grows as calls arrive (see the doc comment).
    const growth = arrivals ? { grown: new Subject<void>(), slots: new Subject<ResultSlot>() } : undefined;
    const outputs$ = processCalls(toolCalls, batch, results, approvals, growth?.grown);
    // The batch ends when both the ordered results and the calls' processing have completed. The
    // slots are subscribed first, so a call that finishes synchronously hands on its result right
    // after its `tool_execution_end`. Why a count and not `concat(merge(ordered$, outputs$),
    // defer(summary))`: CPU time per tool call against the reference, in one process (bench/ab.ts,
    // medians of 5 rounds, load 9-15, 2026-12-02): value tools 0.509x by count against 0.537x by
    // operators, Promise tools 0.599x against 0.717x.
    let running = 2;
    const completeOne = () => {
      running -= 1;
      if (running > 0) return;
      subscriber.next(results.summary(failure.message));
      subscriber.complete();
    };
    inputs.add(results.inOrder(growth?.slots).subscribe(forwardingObserver(subscriber, { next: (event: AgentEvent) => subscriber.next(event), complete: completeOne })));
    // A finalized call becomes its `tool_execution_end` and fills its slot; the rest passes on.
    const settle = (output: CallOutput) => results.take(output, subscriber);
    inputs.add(outputs$.subscribe(forwardingObserver(subscriber, { next: settle, complete: completeOne })));
    if (arrivals && growth) inputs.add(arrivals.subscribe(forwardingObserver(subscriber, growBatch(batch, toolCalls, results, growth))));
    return inputs;
  });
}

/** Why the batch's own machinery failed, once it did (a steering queue that threw). */
interface BatchFailure {
  message: string | undefined;
}

/**
 * Interrupts the batch on the run's abort and, with `steeringInterruptsTools`, on steering. A
 * steering queue that fails can no longer tell whether the user wants the tools to stop: its calls
 * are skipped, and the run ends after this turn (`nextStep`, reason "failed").
 */
function listenForInterruptions(
  inputs: Subscription,
  subscriber: Subscriber<unknown>,
  { abort$, cancellation, config, steering }: ExecuteToolCallsOptions,
  interruption: BatchInterruption,
): BatchFailure {
  const failure: BatchFailure = { message: undefined };
  // NEVER, a run without a signal: nothing to listen to.
  if (abort$ !== NEVER) {
    inputs.add(abort$.subscribe(forwardingObserver(subscriber, { next: () => interruption.interrupt(ABORTED_TOOL_TEXT, cancellation.reason ?? new Error(ABORTED_TOOL_TEXT)) })));
  }
  if (!config.steeringInterruptsTools) return failure;
  const steeringFailed = (error: unknown) => {
    failure.message ??= `The steering queue failed: ${errorText(error)}`;
    interruption.interrupt(failure.message);
  };
  try {
    if (steering.peek().length > 0) interruption.interrupt(STEERING_SKIP_TEXT);
    else inputs.add(steering.arrivals.subscribe(forwardingObserver(subscriber, { next: () => interruption.interrupt(STEERING_SKIP_TEXT), error: steeringFailed })));
  } catch (error) {
    steeringFailed(error);
  }
  return failure;
}

/** Feeds the config's cancels and approval answers to the batch; a source that fails only stops bringing them. */
function listenForAnswers(
  inputs: Subscription,
  subscriber: Subscriber<unknown>,
  config: AgentLoopConfig,
  cancellations: CallCancellations | undefined,
  approvals: CallApprovals | undefined,
): void {
  if (config.cancellations && cancellations) {
    const next = (cancellation: ToolCallCancellation) => cancellations.cancel(cancellation);
    inputs.add(config.cancellations.subscribe(forwardingObserver(subscriber, { next, error: () => undefined })));
  }
  if (config.approvals && approvals) {
    // Waits then end by timeout or abort.
    const next = (decision: ApprovalDecision) => approvals.decide(decision);
    inputs.add(config.approvals.subscribe(forwardingObserver(subscriber, { next, error: () => undefined })));
  }
}

/** What an arrival of calls does to a running batch (eager execution): its calls and slots join, then preparation resumes. */
function growBatch(batch: ToolBatch, toolCalls: ToolCall[], results: BatchResults, growth: { grown: Subject<void>; slots: Subject<ResultSlot> }) {
  return {
    next: (arrival: ToolCallArrival) => {
      batch.assistantMessage = arrival.message;
      for (const toolCall of arrival.toolCalls) {
        toolCalls.push(toolCall);
        growth.slots.next(results.addSlot());
      }
      // The slots exist before preparation resumes: a call may be settled synchronously.
      growth.grown.next();
    },
    complete: () => {
      growth.slots.complete();
      growth.grown.complete();
    },
  };
}

/**
 * The calls' processing, in one of two shapes: one by one (sequential mode: each call prepared,
 * approved and run to its end before the next), or prepared in order, approved, then fanned out.
 */
function processCalls(toolCalls: ToolCall[], batch: ToolBatch, results: BatchResults, approvals: CallApprovals | undefined, grown: Observable<void> | undefined): Observable<CallOutput> {
  const { config, context } = batch;
  const runCall = (prepared: PreparedToolCall) => runToolCall(prepared, batch);
  const sequential = config.toolExecution === "sequential" || callsSequentialTool(toolCalls, context);
  if (sequential) {
    const approve = approvals ? concatMap((output: PreparationOutput) => (output instanceof PreparedToolCall ? awaitApproval(output, batch, approvals) : of(output))) : (source: Observable<PreparationOutput>) => source;
    const run = concatMap((output: PreparationOutput) => (output instanceof PreparedToolCall ? runCall(output) : of(output)));
    return from(toolCalls).pipe(concatMap((toolCall, index) => prepareToolCall(index, toolCall, batch).pipe(approve, run)));
  }
  const prepared$ = prepareToolCalls(toolCalls, batch, grown);
  const approved$ = approvals ? prepared$.pipe(mergeMap((output) => (output instanceof PreparedToolCall ? awaitApproval(output, batch, approvals) : of(output)))) : prepared$;
  return approved$.pipe(fanOutPrepared(fanOut(runCall, config.maxConcurrency ?? Infinity, batch, results)));
}

// Module-level predicates: an arrow written at the call site is a new function per batch.
const needsApproval = (tool: AgentTool): boolean => Boolean(tool.needsApproval);
const isSequential = (tool: AgentTool): boolean => tool.executionMode === "sequential";
const isCapped = (tool: AgentTool): boolean => tool.concurrency !== undefined;

/** True when a call of the batch names a tool with `executionMode: "sequential"`. */
function callsSequentialTool(toolCalls: readonly ToolCall[], context: AgentContext): boolean {
  // Most runs have no such tool: then no call is looked at (the scan made a closure per call).
  const tools = context.tools;
  if (!tools?.some(isSequential)) return false;
  return toolCalls.some((call) => tools.some((tool) => tool.name === call.name && tool.executionMode === "sequential"));
}

/**
 * Runs the prepared calls through `fanOut` and passes everything else (events, calls finalized
 * before running) on as it comes, in the order preparation emitted it.
 *
 * Why by hand rather than `connect` with a `merge` of two `filter`s: that was a Subject and five
 * subscriptions more per batch, and every value passed both filters.
 */
function fanOutPrepared(fanOut: OperatorFunction<PreparedToolCall, CallOutput>): OperatorFunction<PreparationOutput, CallOutput> {
  return (source) =>
    new Observable<CallOutput>((subscriber) =>
      new Observable<PreparedToolCall>((prepared) =>
        source.subscribe(
          forwardingObserver(prepared, {
            next: (output: PreparationOutput) => (output instanceof PreparedToolCall ? prepared.next(output) : subscriber.next(output)),
            complete: () => prepared.complete(),
          }),
        ),
      )
        .pipe(fanOut)
        .subscribe(subscriber),
    );
}

/** The calls' fan-out; with a limit, a call that waits for its slot says so (`announceSlotWaits`). */
function fanOut(
  runCall: (prepared: PreparedToolCall) => Observable<CallOutput>,
  limit: number,
  batch: ToolBatch,
  results: BatchResults,
): OperatorFunction<PreparedToolCall, CallOutput> {
  const capped = batch.context.tools?.some(isCapped) ?? false;
  // Without a limit no call waits: nothing to announce, and nothing to pay per call.
  if (!capped && limit === Infinity) return mergeMap(runCall);
  const slotWaits: SlotWaits = { scheduler: batch.scheduler, cancellation: batch.cancellation, isSettled: (index) => results.isSettled(index) };
  if (!capped) return announceSlotWaits((project) => mergeMap(project, limit), runCall, slotWaits);
  const capOf = (prepared: PreparedToolCall) => (prepared.tool.concurrency === undefined ? undefined : { key: prepared.tool.name, cap: prepared.tool.concurrency });
  return announceSlotWaits((project) => mergeMapCapped(project, limit, capOf), runCall, slotWaits);
}
