import type { Redis } from "ioredis";
import { type ClientCommand, parseClientFrame, type ServerFrame } from "../protocol/protocol-schemas.js";
import { errorFrame } from "../server/execute-command.js";
import type { CommandReplies } from "../server/hosted-session.js";

/** A client's command on its way from the process it reached to the process running its session. */
export interface ForwardedCommand {
  command: Exclude<ClientCommand, { type: "attach" }>;
  /** Where the answer goes: the forwarding process's reply channel, and the id it waits for. */
  replyChannel: string;
  replyId: string;
}

/** The answer to a forwarded command, on the forwarding process's reply channel. */
export interface ForwardedReply {
  replyId: string;
  frame: ServerFrame;
}

/** Parses a forwarded command, or undefined when it is not one. */
export function forwardedCommand(message: string): ForwardedCommand | undefined {
  try {
    const parsed = JSON.parse(message) as Partial<ForwardedCommand>;
    if (typeof parsed.replyChannel !== "string" || typeof parsed.replyId !== "string") return undefined;
    // Validated again: whatever reaches the channel reaches the Agent.
    const command = parseClientFrame(JSON.stringify(parsed.command));
    if (!command.ok || command.command.type === "attach") return undefined;
    return { command: command.command, replyChannel: parsed.replyChannel, replyId: parsed.replyId };
  } catch {
    return undefined;
  }
}

/** Answers a forwarded command on its reply channel. The forwarding process holds its client's events, so no hold here. */
export function remoteReplies(redis: Redis, forwarded: ForwardedCommand): CommandReplies {
  const send = (frame: ServerFrame): void => {
    const reply: ForwardedReply = { replyId: forwarded.replyId, frame };
    redis.publish(forwarded.replyChannel, JSON.stringify(reply)).catch(() => undefined);
  };
  return { sendFrame: send, hold: () => undefined, release: send };
}

/** The answer when no process listens for the session's commands: nothing runs it. */
export function answerWithoutRunner(command: Exclude<ClientCommand, { type: "attach" }>, leaseMs: number): ServerFrame {
  switch (command.type) {
    case "abort":
      return { type: "ack", id: command.id };
    case "prompt":
    case "continue":
    case "reset":
      return errorFrame(command.id, "busy", `The process running this session stopped answering; another process takes it over within ${leaseMs} ms. Try again then.`);
    default:
      return errorFrame(command.id, "invalid_state", `Cannot ${command.type}: no run of this session is live (send "prompt" to start one).`);
  }
}
