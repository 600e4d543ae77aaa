import { InvalidStateError } from "../errors.js";
import { isAssistantMessage } from "../types/messages.js";
import type { AgentMessage, ToolResultMessage } from "../types.js";
import type { QueuedForContinue } from "./agent-queues.js";
import { missingToolResults } from "../streams/transcript/repair-transcript.js";

/**
 * What `Agent.continue` runs with: messages to start from, or the transcript as it is
 * (`agentLoopContinue`). `steered`: the messages are queued steering, so the run's first turn
 * must not drain the steering queue again (one steering message per turn, as in the reference).
 */
export type ContinueInput = { type: "messages"; messages: AgentMessage[]; steered: boolean } | { type: "transcript" };

/**
 * What `Agent.continue` resumes with, in this order: the results the store kept for the
 * transcript's last tool calls (`stored`), else an error result for each call left without one;
 * else the transcript itself when it does not end with an assistant message; else what is queued
 * (`takeQueued`: steering first, else follow-ups).
 *
 * Contract: throws an `InvalidStateError` for an empty transcript, and for one that ends with an
 * assistant message when nothing is queued.
 */
export function continueInput(
  messages: readonly AgentMessage[],
  stored: ToolResultMessage[] | undefined,
  takeQueued: () => QueuedForContinue,
  timestamp: number,
): ContinueInput {
  const repairs = stored ?? missingToolResults(messages, timestamp);
  if (repairs.length > 0) return { type: "messages", messages: repairs, steered: false };
  const last = messages[messages.length - 1];
  if (last === undefined) {
    throw new InvalidStateError("No messages to continue from: the transcript is empty. Use prompt() to start.");
  }
  if (!isAssistantMessage(last)) return { type: "transcript" };
  const queued = takeQueued();
  if (queued.messages.length === 0) {
    throw new InvalidStateError(
      "Cannot continue from message role: assistant: the transcript ends with an assistant message and no messages are queued. Use prompt().",
    );
  }
  return { type: "messages", messages: queued.messages, steered: queued.steering };
}
