import { type Observable, ReplaySubject, Subject, Subscription } from "rxjs";
import { InvalidStateError } from "../errors.js";
import type { AgentEvent, AgentMessage, ToolCallCancellation, ToolCallDecision } from "../types.js";
import { lendTranscript } from "./checked-transcripts.js";

/** The run an `Agent` has going: how to stop it, what it emitted, and what it is told. */
export interface ActiveRun<TOutput> {
  controller: AbortController;
  subscription: Subscription;
  events: ReplaySubject<AgentEvent<unknown, TOutput>>;
  /**
   * `cancelToolCall`'s cancels. Replayed: a cancel made just after the assistant message ended,
   * before its batch subscribed, must still reach it; a batch ignores ids not its own.
   */
  cancellations: ReplaySubject<ToolCallCancellation>;
  /** `approve` / `deny`: only for calls in `state.pendingApprovals`, whose batch listens already. */
  approvals: Subject<ToolCallDecision>;
  /** The id of the last call that started (calls start in source order): the ones after it have not. */
  lastStartedToolCall: string | undefined;
  /** A call of the current batch waited for approval: the store keeps each result as it comes (`approvalRecordOf`). */
  recordsResults: boolean;
}

/** A run that has not subscribed to its loop yet. */
export function newActiveRun<TOutput>(): ActiveRun<TOutput> {
  return {
    controller: new AbortController(),
    events: new ReplaySubject(),
    subscription: new Subscription(),
    cancellations: new ReplaySubject(),
    approvals: new Subject(),
    lastStartedToolCall: undefined,
    recordsResults: false,
  };
}

/** What the agent does with its run's loop. */
export interface RunOwner<TOutput> {
  /** False once the agent let go of the run (agent_end, reset, dispose): its events are dropped then. */
  isCurrent(): boolean;
  /** Takes in an event before the run's subscribers hear it. */
  apply(event: AgentEvent<unknown, TOutput>): void;
  /** The loop failed (an error it could not turn into data). */
  fail(error: unknown): void;
}

/**
 * Subscribes `run` to its loop, which works on the agent's `transcript` itself (lent to it,
 * checked-transcripts.ts; `owner.apply` appends each message as it ends). Each event goes to the
 * owner, then to the run's `events`; the run's Subjects complete with the loop. The run notes
 * which call started last before the owner hears of it (`isUnfinishedToolCall`, run-requests.ts).
 */
export function subscribeRun<TOutput>(run: ActiveRun<TOutput>, loop: Observable<AgentEvent>, transcript: readonly AgentMessage[], owner: RunOwner<TOutput>): void {
  const { events, cancellations, approvals } = run;
  lendTranscript(transcript);
  try {
    const subscription = loop.subscribe({
      next: (loopEvent) => {
        // The loop runs with the agent's `output` schema, so its agent_end carries that output type.
        const event = loopEvent as AgentEvent<unknown, TOutput>;
        if (!owner.isCurrent()) return;
        if (event.type === "tool_execution_start") run.lastStartedToolCall = event.toolCallId;
        owner.apply(event);
        events.next(event);
      },
      error: (error: unknown) => {
        owner.fail(error);
        events.error(error);
      },
      complete: () => {
        cancellations.complete();
        approvals.complete();
        events.complete();
      },
    });
    run.subscription.add(subscription);
  } finally {
    // Taken back if the loop did not take it (it takes it as it is subscribed).
    lendTranscript(undefined);
  }
}

/** Stops `run` at once, without its `agent_end` (`Agent.reset`, `Agent.dispose`): its subscribers complete. */
export function tearDownRun<TOutput>(run: ActiveRun<TOutput>): void {
  run.subscription.unsubscribe();
  run.events.complete();
}

/**
 * One run at a time: `prompt` and `continue` start one only while `run` is undefined.
 *
 * Contract: throws an `InvalidStateError` naming `action` while a run is active.
 */
export function assertNoActiveRun<TOutput>(run: ActiveRun<TOutput> | undefined, action: string): void {
  if (run) {
    throw new InvalidStateError(
      `Cannot ${action} while the agent is running. Use steer() to redirect it now, or followUp() to queue a message for when it finishes.`,
    );
  }
}
