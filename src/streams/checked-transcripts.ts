import type { AgentMessage } from "../types.js";
import type { ConvertedMessages } from "./convert-each-message.js";

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
  /**
   * Set by the owner just before it starts a run on the transcript, taken by that run: the run
   * works on the transcript itself instead of a copy, and appends nothing to it, since the owner
   * appends each message as its `message_end` passes. Why: copying the transcript per prompt made
   * a long session slower every prompt (bench W4, Agent over 10,000 turns).
   */
  lent: boolean;
  /** `convertMessageToLlm`'s answers for the transcript so far, carried from run to run. */
  converted: ConvertedMessages | undefined;
}

const checkedPrefixes = new WeakMap<readonly AgentMessage[], CheckedPrefix>();

/** Registers a transcript that will only ever be appended to. */
export function registerGrowingTranscript(messages: readonly AgentMessage[]): void {
  checkedPrefixes.set(messages, { paired: 0, modelMessages: 0, lent: false, converted: undefined });
}

/** What is checked of a registered transcript; undefined for any other array. */
export function checkedPrefix(messages: readonly AgentMessage[]): CheckedPrefix | undefined {
  return checkedPrefixes.get(messages);
}

/**
 * Lends a registered transcript to the next run started on it (see `CheckedPrefix.lent`), or
 * takes the loan back (`false`) once that run was started, whether it took it or not.
 *
 * Contract: the owner appends every message of that run to the transcript as the run's
 * `message_end` for it passes, as `reduceAgentState` does.
 */
export function lendTranscript(messages: readonly AgentMessage[], lent: boolean): void {
  const checked = checkedPrefixes.get(messages);
  if (checked !== undefined) checked.lent = lent;
}
