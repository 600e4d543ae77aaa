import type { AgentMessage, AgentSnapshot, QueuedMessages } from "../types.js";
import type { AgentOptions } from "./agent-options.js";

/**
 * An `Agent` as plain JSON (`Agent.snapshot`): copies of its transcript and its queues, and its
 * system prompt, the one option that is part of a conversation rather than of the process (a
 * model or tools cannot be written as JSON, so `fromSnapshot` takes them again).
 */
export function snapshotOf(messages: readonly AgentMessage[], queued: QueuedMessages | undefined, systemPrompt: string | undefined): AgentSnapshot {
  const snapshot: AgentSnapshot = { version: 1, messages: [...messages], queued: queued ?? { steering: [], followUp: [] } };
  if (systemPrompt !== undefined) snapshot.systemPrompt = systemPrompt;
  return snapshot;
}

/** The options of an agent made from `snapshot` (`Agent.fromSnapshot`): its transcript, and its system prompt over the one in `options`. */
export function snapshotOptions<TOptions extends AgentOptions>(snapshot: AgentSnapshot, options: TOptions): TOptions {
  const systemPrompt = snapshot.systemPrompt ?? options.systemPrompt;
  return { ...options, ...(systemPrompt === undefined ? {} : { systemPrompt }), messages: snapshot.messages };
}
