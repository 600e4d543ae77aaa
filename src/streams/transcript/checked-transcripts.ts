import type { AgentMessage } from "../../types.js";
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
  /** `convertMessageToLlm`'s answers for the transcript so far, carried from run to run. */
  converted: ConvertedMessages | undefined;
}

const checkedPrefixes = new WeakMap<readonly AgentMessage[], CheckedPrefix>();

/** Registers a transcript that will only ever be appended to. */
export function registerGrowingTranscript(messages: readonly AgentMessage[]): void {
  checkedPrefixes.set(messages, { paired: 0, modelMessages: 0, converted: undefined });
}

/** What is checked of a registered transcript; undefined for any other array. */
export function checkedPrefix(messages: readonly AgentMessage[]): CheckedPrefix | undefined {
  return checkedPrefixes.get(messages);
}

/**
 * The transcript lent to the run being subscribed, if any. Why one slot and not a flag per
 * transcript: the loan is made and taken in one synchronous call (`Agent` subscribing to its run),
 * and a field per transcript is a field per idle `Agent` (bench W5).
 */
let lentTranscript: readonly AgentMessage[] | undefined;

/**
 * Lends a registered transcript to the run subscribed next (`undefined`: takes back a loan no run
 * took). That run works on the transcript itself instead of a copy, and appends nothing to it.
 * Why: copying the transcript per prompt made a long session slower every prompt (bench W4, Agent
 * over 10,000 turns).
 *
 * Contract: the owner appends every message of that run to the transcript as the run's
 * `message_end` for it passes, as `reduceAgentState` does.
 */
export function lendTranscript(messages: readonly AgentMessage[] | undefined): void {
  lentTranscript = messages;
}

/** What is checked of `messages` when it is the transcript lent to this run, taking the loan; else undefined. */
export function takeLentTranscript(messages: readonly AgentMessage[]): CheckedPrefix | undefined {
  if (lentTranscript === undefined) return undefined;
  const lent = lentTranscript === messages ? checkedPrefixes.get(messages) : undefined;
  lentTranscript = undefined;
  return lent;
}
