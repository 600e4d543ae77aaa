import { concatMap, isObservable, Observable, of, type SchedulerLike, type Subscriber, type Subscription, type TeardownLogic } from "rxjs";
import { errorText } from "../../errors.js";
import { errorResult, isToolResult } from "../../tools/tool-results.js";
import type { AgentEvent, AgentToolResult, ApprovalDecision, ToolExecutionContext } from "../../types.js";
import { afterToolCall } from "./after-tool-call.js";
import { isPromiseLike } from "../../util/is-promise-like.js";
import { jsonDepthOf, nestsDeeperThan, tooDeepText } from "../../util/json-depth.js";
import { progressUntilLast } from "../progress-until-last.js";
import { type DeadlineListener, type ToolDeadlines, toolDeadlinesOf } from "./tool-deadlines.js";
import { toolTimeoutMs, toolTimeoutText } from "./tool-timeout.js";
import type { CallCancellations, CancellationListener } from "./call-cancellations.js";
import { CallSignalGroup } from "./call-signal-group.js";
import { type BatchInterruption, FinalizedToolCall, type InterruptionListener, type PreparedToolCall, type ToolBatch } from "./tool-batch.js";

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
  if (!isObservable(output) && !isPromiseLike(output)) {
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
  if (isObservable(output)) {
    // Typed by ToolExecuteResult; the last value is checked by finishWithValue like any result.
    execution.addTeardown(subscribeToOutput(output as Observable<AgentToolResult>, batch, execution));
  } else if (isPromiseLike(output)) {
    // Why `then` and not `from`: a Promise cannot be cancelled, so a subscription would only
    // cost; a value or failure that comes after the call ended is ignored by `settle`.
    // A thenable's own `then` may throw: that is the tool's failure, not the batch's.
    // Why the handlers catch for themselves (`resolved`) rather than a second `then` on the
    // Promise they return: that was one Promise, one closure and one microtask more per call.
    try {
      output.then(
        (value) => execution.resolved(value),
        (error: unknown) => execution.failWithError(error),
      );
    } catch (error) {
      execution.failWithError(error);
    }
  }
  return execution.teardownLogic();
}

/**
 * One execution of a tool: the context the tool gets (`signal`, `update`) and the settlement of
 * the call. Why a class: a call is the hot path of a batch, and one object with its methods on
 * the prototype replaces a handful of closures per call. Bench W2 (200 turns x 8 instant calls)
 * measures this path: 3.5 µs per call against the reference's 8.9 µs (bench/README.md, run of
 * 2026-11-30 01:22); no figure was kept for the closures it replaced.
 */
class ToolExecution implements ToolExecutionContext, InterruptionListener, CancellationListener, DeadlineListener {
  settled = false;
  /** True while the tool's `execute` runs (the synchronous part of the call). */
  starting = false;
  // Created only when the tool reads its signal: most tools never do, and an AbortController
  // is the costliest object of a call. A signal read after the call was stopped comes back aborted.
  private controller: AbortController | undefined;
  /** The scheduler's time when the call started, once something needed it. */
  private startedAt: number | undefined;
  private abortReason: unknown;
  private boundUpdate: ((partialResult: AgentToolResult) => void) | undefined;
  private teardowns: (Subscription | (() => void))[] | undefined;
  private cancellations: CallCancellations | undefined;
  private timeoutMs = 0;
  // BatchInterruption's and ToolDeadlines' links (their lists run through the calls), declared
  // here so every execution has one shape from its start. Also how the call knows it listens.
  interruptionListenedTo: BatchInterruption | undefined = undefined;
  previousListener: InterruptionListener | undefined = undefined;
  nextListener: InterruptionListener | undefined = undefined;
  deadlinesListedIn: ToolDeadlines | undefined = undefined;
  deadline = 0;
  previousByStart: DeadlineListener | undefined = undefined;
  nextByStart: DeadlineListener | undefined = undefined;

  constructor(
    private readonly prepared: PreparedToolCall,
    private readonly subscriber: Subscriber<AgentEvent | FinalizedToolCall>,
    private readonly batch: ToolBatch,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = this.sharedController() ?? new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /**
   * The controller this call shares with the calls it can only be stopped with
   * (call-signal-group.ts), when it reads its signal as it starts and no cancel can stop it
   * alone; otherwise `undefined`, and the call gets its own.
   */
  private sharedController(): AbortController | undefined {
    if (!this.starting || this.abortReason !== undefined || this.batch.cancellations !== undefined) return undefined;
    const timeoutMs = toolTimeoutMs(this.prepared, this.batch.config);
    // No time passes while the tool starts: this is the time `limitTo` counts the deadline from.
    this.startedAt = this.batch.scheduler.now();
    const deadline = timeoutMs === undefined ? Infinity : this.startedAt + timeoutMs;
    const { tool } = this.prepared;
    let group = this.batch.signalGroup;
    if (!group?.admits(tool, deadline)) group = this.batch.signalGroup = new CallSignalGroup(tool, deadline);
    return group.controller;
  }

  /** Bound once, so a tool may destructure it: `execute(id, args, { update })`. */
  get update(): (partialResult: AgentToolResult) => void {
    return (this.boundUpdate ??= (partialResult) => this.report(partialResult));
  }

  /** The run's approvals, for a tool running a loop of its own (`agentTool`). */
  get approvals(): Observable<ApprovalDecision> | undefined {
    return this.batch.config.approvals;
  }

  get scheduler(): SchedulerLike {
    return this.batch.scheduler;
  }

  report(partialResult: AgentToolResult): void {
    if (this.settled) return;
    const { toolCall } = this.prepared;
    this.subscriber.next({
      type: "tool_execution_update",
      toolCallId: toolCall.id,
      toolName: toolCall.name,
      args: toolCall.arguments,
      partialResult: resultNestsTooDeep(partialResult, this.batch.config) ? errorResult(tooDeepResultText(toolCall.name, "progress report", this.batch.config)) : partialResult,
    });
  }

  /** The one settlement of the call: its `FinalizedToolCall`; anything after it is ignored. */
  settle(result: AgentToolResult, isError: boolean, interrupted = false): void {
    if (this.settled || this.subscriber.closed) return;
    this.settled = true;
    const { index, toolCall } = this.prepared;
    this.subscriber.next(new FinalizedToolCall(index, toolCall, result, isError, interrupted));
    this.subscriber.complete();
  }

  /** Finishes with what the tool returned, or with an error saying it was not a result. */
  finishWithValue(value: unknown, hasValue: boolean): void {
    if (hasValue && isToolResult(value)) {
      // A result nested too deep would overflow every step after this one (events, wire, store).
      if (resultNestsTooDeep(value, this.batch.config)) this.settle(errorResult(tooDeepResultText(this.prepared.toolCall.name, "result", this.batch.config)), true);
      else this.settle(value, false);
      return;
    }
    const returned = hasValue ? "something that is not a tool result ({ content: [...], details })" : "no result";
    this.settle(errorResult(`Tool "${this.prepared.toolCall.name}" returned ${returned}.`), true);
  }

  /**
   * Finishes with a Promise's value. What reading it throws (a result whose getters throw) would
   * be an unhandled rejection, which ends a Node process: it is the tool's failure instead.
   */
  resolved(value: unknown): void {
    try {
      this.finishWithValue(value, true);
    } catch (error) {
      this.failWithError(error);
    }
  }

  /** Finishes with the tool's own failure (a throw, a rejection, an Observable error). */
  failWithError(error: unknown): void {
    this.settle(errorResult(errorText(error)), true);
  }

  /** Stops the call from outside (interruption, timeout): its signal fires (with `reason`), it gets `message`. */
  stop(message: string, interrupted = false, reason: unknown = new Error(message)): void {
    this.abort(reason);
    this.settle(errorResult(message), true, interrupted);
  }

  addTeardown(teardown: Subscription | (() => void)): void {
    (this.teardowns ??= []).push(teardown);
  }

  /** What the call's subscription must do when it ends: nothing for a call settled with nothing to release. */
  teardownLogic(): (() => void) | undefined {
    return this.settled && this.teardowns === undefined && this.interruptionListenedTo === undefined && this.deadlinesListedIn === undefined
      ? undefined
      : () => this.tearDown();
  }

  /** Stops the call with a timeout error once `timeoutMs` have passed (the run's one timer, tool-deadlines.ts). */
  limitTo(timeoutMs: number, deadlines: ToolDeadlines): void {
    this.timeoutMs = timeoutMs;
    deadlines.add(this, timeoutMs, this.startedAt);
  }

  timedOut(): void {
    this.stop(toolTimeoutText(this.prepared, this.timeoutMs));
  }

  listenTo(interruption: BatchInterruption, cancellations: CallCancellations | undefined): void {
    interruption.listen(this);
    if (cancellations && !this.settled) {
      this.cancellations = cancellations;
      cancellations.listen(this.prepared.toolCall.id, this);
    }
  }

  interrupted(reason: string): void {
    this.stop(reason, true, this.batch.interruption.cause);
  }

  /** A cancel of this call: the tool hears its signal first, and may still settle on its own. */
  cancelled(message: string): void {
    this.abort(new Error(message));
    this.settle(errorResult(message), true, true);
  }

  tearDown(): void {
    this.interruptionListenedTo?.stopListening(this);
    this.cancellations?.stopListening(this.prepared.toolCall.id, this);
    this.deadlinesListedIn?.remove(this);
    for (const teardown of this.teardowns ?? []) {
      if (typeof teardown === "function") teardown();
      else teardown.unsubscribe();
    }
    if (!this.settled) this.abort(new Error("Tool call was cancelled"));
  }

  private abort(reason: unknown): void {
    this.abortReason ??= reason;
    this.controller?.abort(reason);
  }
}

/** True when a result's `details` or `content` nests deeper than the run's `maxJsonDepth` (an MCP server's `structuredContent`, say). */
function resultNestsTooDeep(result: AgentToolResult, config: { readonly maxJsonDepth?: number }): boolean {
  const limit = jsonDepthOf(config);
  return nestsDeeperThan(result.details, limit) || nestsDeeperThan(result.content, limit);
}

function tooDeepResultText(toolName: string, what: "result" | "progress report", config: { readonly maxJsonDepth?: number }): string {
  return `Tool "${toolName}" returned a ${what} that was not kept: its details or content ${tooDeepText(jsonDepthOf(config))}.`;
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
