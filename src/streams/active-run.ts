import { type Observable, ReplaySubject, Subject, Subscription } from "rxjs";
import { isAssistantMessage, isFailedMessage, toolCallsOf } from "../types/messages.js";
import type { AgentEvent, AgentMessage, AgentState, ToolCallCancellation, ToolCallDecision } from "../types.js";
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
 * owner, then to the run's `events`; the run's Subjects complete with the loop.
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

/** Running or waiting (started, not ended), or a call of the current assistant message not started yet. */
export function isUnfinishedToolCall(state: AgentState, run: Pick<ActiveRun<unknown>, "lastStartedToolCall">, toolCallId: string): boolean {
  if (state.pendingToolCalls.includes(toolCallId) || isAwaitingApproval(state, toolCallId)) return true;
  const { messages } = state;
  let index = messages.length - 1;
  while (index >= 0 && !isAssistantMessage(messages[index]!)) index--;
  const assistant = messages[index];
  if (assistant === undefined || !isAssistantMessage(assistant) || isFailedMessage(assistant) || assistant.stopReason === "length") return false;
  const calls = toolCallsOf(assistant);
  const started = run.lastStartedToolCall === undefined ? -1 : calls.findIndex((call) => call.id === run.lastStartedToolCall);
  return calls.findIndex((call) => call.id === toolCallId) > started;
}

export function isAwaitingApproval(state: AgentState, toolCallId: string): boolean {
  return state.pendingApprovals.some((pending) => pending.toolCallId === toolCallId);
}
