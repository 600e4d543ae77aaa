import type { AgentMessage } from "../types.js";

/** The queue a message was drained from, as `queuedFrom` tells it. */
export type MessageQueueName = "steering" | "followUp";

// Weak: a tag lives exactly as long as its message, and costs a run nothing it keeps.
const drainedFrom = new WeakMap<object, MessageQueueName>();

/** Marks `messages` as drained from `queue` (next-step.ts's `drain`, for every run). */
export function markQueued(messages: readonly AgentMessage[], queue: MessageQueueName): void {
  for (const message of messages) if (typeof message === "object" && message !== null) drainedFrom.set(message, queue);
}

/**
 * Which queue the loop drained `message` from: `"steering"` or `"followUp"`, or `undefined` for a
 * message it did not drain (a prompt, an assistant reply). Why a side table and not a field of
 * `message_start`: the event protocol is the reference's, and an instrumentation (`withTelemetry`)
 * reads the run's events from outside, where a steering message after a turn without tool
 * calls looks exactly like a follow-up. A message object queued again takes its latest queue.
 */
export function queuedFrom(message: AgentMessage): MessageQueueName | undefined {
  return typeof message === "object" && message !== null ? drainedFrom.get(message) : undefined;
}
