import type { Agent } from "../index.js";
import type { Refusal } from "./chat-request.js";
import { errorText } from "../util/error-text.js";

/**
 * What `POST <path>/<chat id>/commands` takes: the controls the AI SDK 5 protocol has no message
 * for. `steer` and `follow_up` reach the active run (or the next one); `approve` / `deny` answer
 * a call that waits (a `data-tool-approval` part with state `"waiting"`); `abort` stops the run.
 */
export type ChatCommand =
  | { type: "steer" | "follow_up"; text: string }
  | { type: "approve"; toolCallId: string }
  | { type: "deny"; toolCallId: string; reason?: string }
  | { type: "abort" };

/** Checks a command's JSON and runs it on `agent`; a command the agent refuses (no such call waiting) is a 409. */
export function runChatCommand(agent: Agent, body: string): Refusal | undefined {
  const command = parseChatCommand(body);
  if ("status" in command) return command;
  try {
    if (command.type === "steer") agent.steer(command.text);
    else if (command.type === "follow_up") agent.followUp(command.text);
    else if (command.type === "approve") agent.approve(command.toolCallId);
    else if (command.type === "deny") agent.deny(command.toolCallId, command.reason);
    else agent.abort();
    return undefined;
  } catch (error) {
    return { status: 409, message: errorText(error) };
  }
}

function parseChatCommand(body: string): ChatCommand | Refusal {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { status: 400, message: 'The body is not JSON: send a command such as { "type": "steer", "text": "…" }.' };
  }
  const { type, text, toolCallId, reason } = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (type === "abort") return { type };
  if (type === "steer" || type === "follow_up") {
    return typeof text === "string" && text.trim() !== "" ? { type, text } : { status: 400, message: `"${type}" needs a non-empty "text".` };
  }
  if (type === "approve" || type === "deny") {
    if (typeof toolCallId !== "string" || toolCallId === "") return { status: 400, message: `"${type}" needs the "toolCallId" of a call waiting for approval.` };
    if (type === "approve") return { type, toolCallId };
    return typeof reason === "string" ? { type, toolCallId, reason } : { type, toolCallId };
  }
  return { status: 400, message: 'Unknown command "type": one of steer, follow_up, approve, deny, abort.' };
}
