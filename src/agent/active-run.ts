import { ReplaySubject, Subject, Subscription } from "rxjs";
import { InvalidStateError } from "../errors.js";
import type { AgentEvent, ToolCallCancellation, ApprovalDecision } from "../types.js";
import type { RunListeners } from "./run-listeners.js";
import { newRunEvents, type RunEvents, type RunReplay } from "./run-replay.js";

/** The run an `Agent` has going: how to stop it, what it emitted, and what it is told. */
export interface ActiveRun<TOutput> {
  controller: AbortController;
  subscription: Subscription;
  /** Replayed to late subscribers as the agent's `runReplay` option says (run-replay.ts). */
  events: RunEvents<AgentEvent<unknown, TOutput>>;
  /**
   * `cancelToolCall`'s cancels. Replayed: a cancel made just after the assistant message ended,
   * before its batch subscribed, must still reach it; a batch ignores ids not its own.
   */
  cancellations: ReplaySubject<ToolCallCancellation>;
  /** `approve` / `deny`: only for calls in `state.pendingApprovals`, whose batch listens already. */
  approvals: Subject<ApprovalDecision>;
  /** The id of the last call that started (calls start in source order): the ones after it have not. */
  lastStartedToolCall: string | undefined;
  /** A call of the current batch waited for approval: the store keeps each result as it comes (`approvalRecordOf`). */
  recordsResults: boolean;
  /** The `Agent.subscribe` listeners' deliveries of this run, if the agent has ever had a listener. */
  listeners: RunListeners<TOutput> | undefined;
}

/** A run that has not subscribed to its loop yet (subscribe-run.ts). */
export function newActiveRun<TOutput>(replay: RunReplay): ActiveRun<TOutput> {
  return {
    controller: new AbortController(),
    events: newRunEvents(replay),
    subscription: new Subscription(),
    cancellations: new ReplaySubject(),
    approvals: new Subject(),
    lastStartedToolCall: undefined,
    recordsResults: false,
    listeners: undefined,
  };
}

/** Stops `run` at once, without its `agent_end` (`Agent.reset`, `Agent.dispose`): its subscribers complete. */
export function tearDownRun<TOutput>(run: ActiveRun<TOutput>): void {
  run.subscription.unsubscribe();
  run.listeners?.end();
  run.events.complete();
}

/**
 * What `assertNoActiveRun` says per action. Each starts with pi-agent-core's own sentence, so
 * code that matches on the reference's errors works here too; then how to go on.
 */
const busyTexts = {
  prompt: "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.",
  continue: "Agent is already processing. Wait for completion before continuing.",
} as const;

/**
 * One run at a time: `prompt` and `continue` start one only while `run` is undefined.
 *
 * Contract: throws an `InvalidStateError` naming `action` while a run is active.
 */
export function assertNoActiveRun<TOutput>(run: ActiveRun<TOutput> | undefined, action: keyof typeof busyTexts): void {
  if (run) {
    throw new InvalidStateError(
      `${busyTexts[action]} Cannot ${action} while the agent is running: use steer() to redirect it now, or followUp() to queue a message for when it finishes (waitForIdle() resolves when it has).`,
    );
  }
}
