import type { AgentEvent, AgentMessage, AgentState } from "../types.js";
import { initialAgentState, reduceAgentState } from "./agent-state.js";
import { withState } from "./shared-ids.js";
import { registerGrowingTranscript } from "../streams/transcript/checked-transcripts.js";
import type { OnDemandSubject, OnDemandValue } from "./on-demand-subject.js";

/**
 * The state of a new or reset agent. Its transcript is only ever appended to (agent-state.ts), so
 * it is registered as such: each run then checks only what was added since the last one.
 */
export function freshAgentState(messages: readonly AgentMessage[]): AgentState {
  const state = initialAgentState(messages);
  registerGrowingTranscript(state.messages);
  return state;
}

/**
 * Publishes an event of an `Agent`'s run: the state it reduces to on `state`, then the event on
 * `events`, so an `events$` listener reads the state the event made.
 */
export function publishRunEvent<TEvent extends AgentEvent>(event: TEvent, state: OnDemandValue<AgentState>, events: OnDemandSubject<TEvent>): void {
  // The reducer returns the same state for an event that changes nothing (turn_start, progress):
  // no wake-up for state$ listeners then.
  const next = reduceAgentState(state.value, event);
  if (next !== state.value) state.next(next);
  events.next(event);
}

/** Publishes `state` changed by `patch`: a change that no event makes (queue counts, a loop that failed). */
export function patchState(state: OnDemandValue<AgentState>, patch: Partial<AgentState>): void {
  state.next(withState(state.value, patch));
}
