import { errorText, InvalidStateError } from "../errors.js";
import type { Agent } from "../agent/agent.js";
import type { ClientCommand, ErrorCode, ServerFrame } from "../protocol/protocol-schemas.js";
import type { CommandReplies } from "./hosted-session.js";

/**
 * Runs one client command on `agent`; the ack or error goes to `replies` only. `reset` resets the
 * agent, then `afterReset` starts the session's new epoch and sends the ack.
 */
export function executeCommand(agent: Agent, command: Exclude<ClientCommand, { type: "attach" }>, replies: CommandReplies, afterReset: () => void): void {
  try {
    switch (command.type) {
      case "prompt":
      case "continue":
        if (agent.isRunning) {
          replies.sendFrame(errorFrame(command.id, "busy", `Cannot ${command.type} while the agent is running: send "steer" to redirect it now or "follow_up" to queue a message for when it finishes.`));
          return;
        }
        // The run may emit events synchronously; the ack must still come first.
        acknowledgeFirst(replies, command.id, () => (command.type === "prompt" ? agent.prompt(command.input) : agent.continue()));
        return;
      case "steer":
        agent.steer(command.input);
        break;
      case "follow_up":
        agent.followUp(command.input);
        break;
      case "abort":
        // The run's agent_end is emitted during abort(): the ack goes first, as for prompt.
        acknowledgeFirst(replies, command.id, () => agent.abort(command.clearFollowUps ? { clearFollowUps: true } : {}));
        return;
      case "cancel_tool":
        // The cancelled call's tool_execution_end may be emitted during the cancel: the ack goes first.
        acknowledgeFirst(replies, command.id, () => agent.cancelToolCall(command.toolCallId, command.reason));
        return;
      case "approve":
        // An approved call may start (and emit) at once: the ack goes first.
        acknowledgeFirst(replies, command.id, () => agent.approve(command.toolCallId));
        return;
      case "deny":
        acknowledgeFirst(replies, command.id, () => agent.deny(command.toolCallId, command.reason));
        return;
      case "reset":
        agent.reset();
        afterReset();
        return;
    }
    replies.sendFrame({ type: "ack", id: command.id });
  } catch (error) {
    replies.sendFrame(commandError(command.id, error));
  }
}

export function errorFrame(id: string | undefined, code: ErrorCode, message: string): ServerFrame {
  return id === undefined ? { type: "error", code, message } : { type: "error", id, code, message };
}

export function commandError(id: string, error: unknown): ServerFrame {
  return errorFrame(id, error instanceof InvalidStateError ? "invalid_state" : "internal", errorText(error));
}

function acknowledgeFirst(replies: CommandReplies, id: string, run: () => void): void {
  replies.hold();
  try {
    run();
    replies.release({ type: "ack", id });
  } catch (error) {
    replies.release(commandError(id, error));
  }
}
