import type { Subject } from "rxjs";
import type { AgentMessage, AgentState, PromptInput, QueuedMessages, QueueMode } from "../types.js";
import type { ActiveRun } from "./active-run.js";
import { AgentQueues, type QueueCounts } from "./agent-queues.js";
import { requestCancel, requestDecision } from "./run-requests.js";

/** What of the active run `cancelToolCall`, `approve` and `deny` reach. */
export type RunRequestTarget = Pick<ActiveRun<unknown>, "cancellations" | "lastStartedToolCall" | "approvals">;

/**
 * What a caller does to an `Agent` without starting a run: queue steering and follow-up
 * messages (`steer`, `followUp`, or their Subjects) and clear them, and steer the active run's
 * end and its tool calls (`abort`, `cancelToolCall`, `approve`, `deny`). The queues themselves
 * are made on first use (agent-queues.ts).
 *
 * Why a base class of `Agent` (its only subclass): these are public methods of the agent, and
 * they make one concept apart from starting and publishing runs (agent.ts); here they get a file
 * of their own.
 */
export abstract class AgentControls {
  steeringMode: QueueMode = "one-at-a-time";
  followUpMode: QueueMode = "one-at-a-time";

  // Made on first use, and runs get views of the queues (queue-view.ts): most agents are never
  // steered (agent-queues.ts).
  protected queuesValue: AgentQueues | undefined;

  abstract get state(): AgentState;

  /** The messages of `input`, checked and stamped as a prompt's are. */
  protected abstract messagesOf(input: PromptInput): AgentMessage[];

  /** Publishes the queues' new lengths in the agent's state. */
  protected abstract publishCounts(counts: QueueCounts): void;

  /** The run now active, if any. */
  protected abstract activeRunOrUndefined(): RunRequestTarget | undefined;

  /** The controller of the active run, else of the latest run its listeners still work on. */
  protected abstract currentController(): AbortController | undefined;

  protected get queues(): AgentQueues {
    return (this.queuesValue ??= new AgentQueues((counts: QueueCounts) => this.publishCounts(counts)));
  }

  /** Push a message here (or call `steer`) to redirect the agent before its next model call. */
  get steering(): Subject<AgentMessage> {
    return this.queues.steering$;
  }

  /** Push a message here (or call `followUp`) to handle it once the agent would stop. */
  get followUps(): Subject<AgentMessage> {
    return this.queues.followUps$;
  }

  /** Queues a message injected before the next model call of the active (or next) run. */
  steer(input: PromptInput): void {
    this.queues.steer(this.messagesOf(input));
  }

  /** Queues a message handled once the agent would stop. */
  followUp(input: PromptInput): void {
    this.queues.followUp(this.messagesOf(input));
  }

  /**
   * Drops every queued steering and follow-up message and returns them (pi-agent-core's
   * `clearAllQueues`). `abort()` drops only the steering: call this too when queued follow-ups
   * should not run after the next prompt.
   * @example const { steering, followUp } = agent.clearAllQueues();
   */
  clearAllQueues(): QueuedMessages {
    return { steering: this.clearSteering(), followUp: this.clearFollowUps() };
  }

  /** @deprecated use `clearAllQueues` (pi-agent-core's name; the same method). */
  clearQueues(): QueuedMessages {
    return this.clearAllQueues();
  }

  /** Drops the queued steering messages and returns them; queued follow-ups stay (pi-agent-core's `clearSteeringQueue`). */
  clearSteering(): AgentMessage[] {
    return this.queuesValue?.clearSteering() ?? [];
  }

  /** Drops the queued follow-up messages and returns them; queued steering stays (pi-agent-core's `clearFollowUpQueue`). */
  clearFollowUps(): AgentMessage[] {
    return this.queuesValue?.clearFollowUps() ?? [];
  }

  /**
   * Whether a steering or follow-up message waits. After a run ended with messages still queued
   * (an abort keeps follow-ups), `continue()` delivers them.
   * @example if (agent.hasQueuedMessages()) await lastValueFrom(agent.continue());
   */
  hasQueuedMessages(): boolean {
    return this.state.queuedSteering > 0 || this.state.queuedFollowUp > 0;
  }

  /**
   * Ends the active run gracefully (`stopReason: "aborted"`, a result for every tool call),
   * drops queued steering, and returns what it dropped.
   *
   * Queued follow-ups stay unless `clearFollowUps` (as in pi-agent-core): they run after the
   * next prompt, or at once with `continue()`. To stop for good, `abort({ clearFollowUps: true })`;
   * `clearAllQueues()` drops both queues without aborting; `state.queuedFollowUp` counts what waits.
   * `reason` (default `new Error("Aborted by the user")`) is the run's signal's reason, and the
   * running tools' `signal.reason`, so a tool can tell why it stops.
   * @example const dropped = agent.abort({ clearFollowUps: true }); // { steering: [...], followUp: [...] }
   */
  abort(options: { clearFollowUps?: boolean; reason?: unknown } = {}): QueuedMessages {
    // Options that are not an object (a JavaScript caller's `null`) are no options: an abort
    // that threw would leave the run going.
    const { clearFollowUps, reason } = typeof options === "object" && options !== null ? options : {};
    const steering = this.clearSteering();
    const followUp = clearFollowUps ? this.clearFollowUps() : [];
    this.currentController()?.abort(reason ?? new Error("Aborted by the user"));
    return { steering, followUp };
  }

  /**
   * Cancels one tool call of the active run: its signal fires and its result is the error
   * `Tool call was cancelled[: reason].` (or the tool's own result if it settles as its signal
   * fires); a call not started yet never runs. The other calls and the run go on.
   *
   * Contract: throws an `InvalidStateError` unless `toolCallId` is a call of the current
   * assistant message that has not finished (running, waiting, or not started yet).
   */
  cancelToolCall(toolCallId: string, reason?: string): void {
    requestCancel(this.activeRunOrUndefined(), this.state, toolCallId, reason);
  }

  /**
   * Lets a call that waits for approval (`state.pendingApprovals`) run.
   *
   * Contract: throws an `InvalidStateError` unless the call is waiting for approval now.
   */
  approve(toolCallId: string): void {
    requestDecision(this.activeRunOrUndefined(), this.state, { toolCallId, approved: true }, "approve");
  }

  /**
   * Denies a call that waits for approval: its result is the error `Tool call was denied[: reason]`.
   *
   * Contract: throws an `InvalidStateError` unless the call is waiting for approval now.
   */
  deny(toolCallId: string, reason?: string): void {
    requestDecision(this.activeRunOrUndefined(), this.state, reason === undefined ? { toolCallId, approved: false } : { toolCallId, approved: false, reason }, "deny");
  }
}
