import type { AgentMessage } from "../types.js";

/**
 * How much of a transcript earlier runs have checked, for a transcript that only grows.
 *
 * Every run checks the transcript it starts from (every tool call paired; which messages go to
 * the model as they are). For an `Agent` that is the same array each time, one turn longer, so
 * checking it whole made a long session's prompts slower every turn (10,000 turns: the last 1,000
 * cost 7x the first 1,000). Only arrays registered here are remembered: a caller's own array may
 * be changed anywhere between runs, while an Agent's transcript is only appended to
 * (agent-state.ts), so what was checked of it stays true.
 */
export interface CheckedPrefix {
  /** Every tool call before this index has its result before it; the next run checks from here. */
  paired: number;
  /** The messages before this index are all model messages (the default conversion sends them as they are). */
  modelMessages: number;
}

const checkedPrefixes = new WeakMap<readonly AgentMessage[], CheckedPrefix>();

/** Registers a transcript that will only ever be appended to. */
export function registerGrowingTranscript(messages: readonly AgentMessage[]): void {
  checkedPrefixes.set(messages, { paired: 0, modelMessages: 0 });
}

/** What is checked of a registered transcript; undefined for any other array. */
export function checkedPrefix(messages: readonly AgentMessage[]): CheckedPrefix | undefined {
  return checkedPrefixes.get(messages);
}
