import type { AgentMessage, AgentSnapshot, QueuedMessages, ThinkingLevel } from "../types.js";
import type { AgentOptions } from "./agent-options.js";

/**
 * An `Agent` as plain JSON (`Agent.snapshot`): copies of its transcript and its queues, and its
 * system prompt and thinking level, the options that are part of a conversation rather than of
 * the process (a model or tools cannot be written as JSON, so `fromSnapshot` takes them again).
 */
export function snapshotOf(
  messages: readonly AgentMessage[],
  queued: QueuedMessages | undefined,
  settings: { systemPrompt?: string | undefined; thinkingLevel?: ThinkingLevel | undefined },
): AgentSnapshot {
  const snapshot: AgentSnapshot = { version: 1, messages: [...messages], queued: queued ?? { steering: [], followUp: [] } };
  if (settings.systemPrompt !== undefined) snapshot.systemPrompt = settings.systemPrompt;
  if (settings.thinkingLevel !== undefined) snapshot.thinkingLevel = settings.thinkingLevel;
  return snapshot;
}

/** The options of an agent made from `snapshot` (`Agent.fromSnapshot`): its transcript, and its system prompt and thinking level over those in `options`. */
export function snapshotOptions<TOptions extends AgentOptions>(snapshot: AgentSnapshot, options: TOptions): TOptions {
  const systemPrompt = snapshot.systemPrompt ?? options.systemPrompt;
  const thinkingLevel = snapshot.thinkingLevel ?? options.thinkingLevel;
  return { ...options, ...(systemPrompt === undefined ? {} : { systemPrompt }), ...(thinkingLevel === undefined ? {} : { thinkingLevel }), messages: snapshot.messages };
}
