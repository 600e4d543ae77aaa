import { isAssistantMessage, isFailedMessage, toolCallsOf } from "../types/messages.js";
import type { Message, ToolCall, ToolResultMessage } from "../types/messages.js";

/** What a call whose result is not in the messages sent gets in its place. */
export const RESULT_NOT_SENT_TEXT = "No result of this tool call is in the conversation any more.";

/**
 * The messages as a provider takes them: each tool result right after the assistant message
 * whose call it answers, at most one per call, and a result for every call. A tool result that
 * answers no call of the assistant message before it (or one already answered) is left out, and a
 * call left without a result gets an error result (`RESULT_NOT_SENT_TEXT`) before the next user or
 * assistant message. The same array when nothing needed changing, which is what the loop's own
 * transcripts always are.
 *
 * Why in the providers, after every hook: OpenAI's two APIs and Anthropic's refuse (HTTP 400) a
 * result without its call or a call without its result, as their documentation says, and so
 * every later request of that conversation. A `transformContext` that keeps the last n messages
 * cuts a call from its results, one that leaves out a tool's results cuts the other way, and a
 * store that lost the line of an assistant message keeps its results: each wedged the session
 * for good. (The loop's own repair, `pairToolCalls`, fixes the transcript a run starts from; it
 * cannot see what the hooks make of it.)
 */
export function pairedForModel(messages: readonly Message[]): readonly Message[] {
  return isPaired(messages) ? messages : repaired(messages);
}

/** True when every tool result answers a call of the assistant message before it, once, and every call has one. */
function isPaired(messages: readonly Message[]): boolean {
  // The ids of the last assistant message's calls still without a result; made only for a message with calls.
  let waiting: Set<string> | undefined;
  for (const message of messages) {
    if (message.role === "toolResult") {
      if (waiting?.delete(message.toolCallId) !== true) return false;
      continue;
    }
    if (waiting !== undefined && waiting.size > 0) return false;
    const calls = answerableCalls(message);
    waiting = calls.length === 0 ? undefined : new Set(calls.map((call) => call.id));
    // Two calls with one id: the loop renames such ids, a transcript from elsewhere may not have.
    if (waiting !== undefined && waiting.size !== calls.length) return false;
  }
  return waiting === undefined || waiting.size === 0;
}

function repaired(messages: readonly Message[]): Message[] {
  const result: Message[] = [];
  let open: ToolCall[] = [];
  const closeOpen = (timestamp: number): void => {
    for (const call of open) result.push(notSentResult(call, timestamp));
    open = [];
  };
  for (const message of messages) {
    if (message.role === "toolResult") {
      const position = open.findIndex((call) => call.id === message.toolCallId);
      if (position < 0) continue;
      open.splice(position, 1);
      result.push(message);
      continue;
    }
    closeOpen(message.timestamp);
    result.push(message);
    open = [...answerableCalls(message)];
  }
  closeOpen(messages.at(-1)?.timestamp ?? 0);
  return result;
}

const NO_CALLS: readonly ToolCall[] = [];

/** The calls of a message that must get results: those of an assistant message that did not fail (a failed one's calls never ran and are not sent). */
function answerableCalls(message: Message): readonly ToolCall[] {
  return isAssistantMessage(message) && !isFailedMessage(message) ? toolCallsOf(message) : NO_CALLS;
}

function notSentResult(call: ToolCall, timestamp: number): ToolResultMessage {
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text: RESULT_NOT_SENT_TEXT }], isError: true, timestamp };
}
