import { Observable, type SchedulerLike, type Subscriber, type Subscription, type Unsubscribable } from "rxjs";
import { errorText } from "../../errors.js";
import { errorResult, isToolResult } from "../../tools/tool-results.js";
import type { AgentEvent, AgentToolResult, ApprovalDecision, ToolExecutionContext } from "../../types.js";
import { jsonDepthOf, nestsDeeperThan, tooDeepText } from "../../util/json-depth.js";
import type { DeadlineListener, ToolDeadlines } from "./tool-deadlines.js";
import { toolTimeoutMs, toolTimeoutText } from "./tool-timeout.js";
import type { CallCancellations, CancellationListener } from "./call-cancellations.js";
import { CallSignalGroup } from "./call-signal-group.js";
import { type BatchInterruption, FinalizedToolCall, type InterruptionListener, type PreparedToolCall, type ToolBatch } from "./tool-batch.js";

/**
 * One execution of a tool: the context the tool gets (`signal`, `update`) and the settlement of
 * the call. Why a class: a call is the hot path of a batch, and one object with its methods on
 * the prototype replaces a handful of closures per call. Bench W2 (200 turns x 8 instant calls)
 * measures this path: 3.5 µs per call against the reference's 8.9 µs (bench/README.md, run of
 * 2026-11-30 01:22); no figure was kept for the closures it replaced.
 */
export class ToolExecution implements ToolExecutionContext, InterruptionListener, CancellationListener, DeadlineListener {
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

  /**
   * Emits a progress report as its `tool_execution_update`. One that is not a tool result, nests
   * too deep or cannot be read (getters that throw, a Proxy) is replaced by a report saying so:
   * every consumer of the event (a UI, the wire, a store) reads `partialResult.content`.
   */
  report(partialResult: AgentToolResult): void {
    if (this.settled) return;
    const { toolCall } = this.prepared;
    const problem = problemOfResult(partialResult, this.batch.config);
    this.subscriber.next({
      type: "tool_execution_update",
      toolCallId: toolCall.id,
      toolName: toolCall.name,
      args: toolCall.arguments,
      partialResult: problem === undefined ? partialResult : errorResult(resultProblemText(toolCall.name, "progress report", problem, this.batch.config)),
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

  /** Finishes with what the tool returned, or with an error result saying why it is not kept. */
  finishWithValue(value: unknown, hasValue: boolean): void {
    const { name } = this.prepared.toolCall;
    if (!hasValue) {
      this.settle(errorResult(`Tool "${name}" returned no result.`), true);
      return;
    }
    const problem = problemOfResult(value, this.batch.config);
    if (problem === undefined) this.settle(value as AgentToolResult, false);
    else this.settle(errorResult(resultProblemText(name, "result", problem, this.batch.config)), true);
  }

  /**
   * Finishes with a Promise's value. Whatever its handler throws would be an unhandled
   * rejection, which ends a Node process: it is the call's failure instead.
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

  /**
   * What the call's subscription must do when it ends: nothing for a call settled with nothing to
   * release, else this execution's `unsubscribe`. Why itself and not a closure: a call that waits
   * for its tool (a Promise, an Observable) made one per call.
   */
  teardownLogic(): Unsubscribable | undefined {
    return this.settled && this.teardowns === undefined && this.interruptionListenedTo === undefined && this.deadlinesListedIn === undefined ? undefined : this;
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

  /** The call's subscription ended: it stops listening, releases what it holds, and a call still running hears its signal. */
  unsubscribe(): void {
    this.interruptionListenedTo?.stopListening(this);
    this.cancellations?.stopListening(this.prepared.toolCall.id, this);
    this.deadlinesListedIn?.remove(this);
    // Most calls have none: no empty array made to loop over.
    const teardowns = this.teardowns;
    if (teardowns !== undefined) {
      for (const teardown of teardowns) {
        if (typeof teardown === "function") teardown();
        else teardown.unsubscribe();
      }
    }
    if (!this.settled) this.abort(new Error("Tool call was cancelled"));
  }

  private abort(reason: unknown): void {
    this.abortReason ??= reason;
    this.controller?.abort(reason);
  }
}

/** Why the loop cannot keep what a tool returned: not a tool result, nested too deep, or what reading it threw. */
type ResultProblem = "not a tool result" | "too deep" | { readonly unreadable: unknown };

/**
 * Why the loop cannot keep `value` as a tool's result or progress report, or `undefined` when it
 * can. Why it catches: reading a result runs the tool's own code (getters, a Proxy's traps), and
 * a throw here would end the run, or the process from a Promise's handler.
 */
function problemOfResult(value: unknown, config: { readonly maxJsonDepth?: number }): ResultProblem | undefined {
  try {
    if (!isToolResult(value)) return "not a tool result";
    // A result nested too deep would overflow every step after this one (events, wire, store).
    return resultNestsTooDeep(value, config) ? "too deep" : undefined;
  } catch (error) {
    return { unreadable: error };
  }
}

function resultProblemText(toolName: string, what: "result" | "progress report", problem: ResultProblem, config: { readonly maxJsonDepth?: number }): string {
  if (problem === "too deep") return `Tool "${toolName}" returned a ${what} that was not kept: its details or content ${tooDeepText(jsonDepthOf(config))}.`;
  if (problem === "not a tool result") return `Tool "${toolName}" ${what === "result" ? "returned something" : "reported progress"} that is not a tool result ({ content: [...], details }).`;
  return `Tool "${toolName}" returned a ${what} that could not be read: ${errorText(problem.unreadable)}`;
}

/** True when a result's `details` or `content` nests deeper than the run's `maxJsonDepth` (an MCP server's `structuredContent`, say). */
function resultNestsTooDeep(result: AgentToolResult, config: { readonly maxJsonDepth?: number }): boolean {
  const limit = jsonDepthOf(config);
  return nestsDeeperThan(result.details, limit) || nestsDeeperThan(result.content, limit);
}
