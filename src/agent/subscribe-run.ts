import type { Observable } from "rxjs";
import type { AgentEvent, AgentMessage, AgentState } from "../types.js";
import type { ActiveRun } from "./active-run.js";
import { type AgentOptions, schedulerOf } from "./agent-options.js";
import { lendTranscript } from "../streams/transcript/checked-transcripts.js";
import type { OnDemandSubject, OnDemandValue } from "./on-demand-subject.js";
import { patchState, publishRunEvent } from "./published-state.js";
import { writeToStore } from "./store-writer.js";

/** The parts of an `Agent` its run's events go to, and how the agent lets go of the run. */
export interface RunOwner<TOutput> {
  /** The agent's options as they are now (`configure` may change its clock or `onWarning` mid-run). */
  options(): AgentOptions;
  state: OnDemandValue<AgentState>;
  events: OnDemandSubject<AgentEvent<unknown, TOutput>>;
  /** False once the agent let go of the run (agent_end, reset, dispose): its events are dropped then. */
  isCurrent(): boolean;
  /** Lets go of the run if it is still the agent's active run: the agent is idle. */
  release(): void;
}

/**
 * Subscribes `run` to its loop, which works on the agent's `transcript` itself (lent to it,
 * checked-transcripts.ts; the agent's state appends each message as it ends). Each event is
 * taken in by the agent before the run's subscribers hear it: the run notes which call started
 * last (`isUnfinishedToolCall`, run-requests.ts), the store writes it (store-writer.ts), the agent
 * is idle at `agent_end`, then the state and `events$` publish it, then the `subscribe` listeners
 * hear it (run-listeners.ts), then the run's own subscribers. A loop error lets go of the
 * run too. The run's Subjects complete with the loop.
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
        const options = owner.options();
        if (options.store) writeToStore(options.store, event, run, schedulerOf(options), options.onWarning);
        // Idle before anyone hears agent_end, so a listener may prompt again at once.
        if (event.type === "agent_end") owner.release();
        publishRunEvent(event, owner.state, owner.events);
        run.listeners?.deliver(event);
        events.next(event);
      },
      error: (error: unknown) => {
        owner.release();
        patchState(owner.state, { isStreaming: false });
        run.listeners?.end();
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
