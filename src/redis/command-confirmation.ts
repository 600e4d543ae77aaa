import { errorText } from "../errors.js";
import type { ClientCommand, ServerFrame } from "../protocol/protocol-schemas.js";
import { errorFrame } from "../server/execute-command.js";
import type { SessionRunner } from "./session-runner.js";

type Command = Exclude<ClientCommand, { type: "attach" }>;

/** What the sender of a command reads when the runner lost the session's lease before Redis stored the command. */
export function sessionMovedText(type: Command["type"]): string {
  return `The session moved to another process before Redis stored this ${type}, so it was not taken and no process will act on it; send it again.`;
}

/**
 * Commands taken once Redis stored their first transcript write (a prompt's message, an
 * approval's record): a takeover goes on from it, so the sender must not be told to send it again
 * even when the lease was lost right after it. A steer or a follow-up is taken once Redis stored
 * it in the session's queue (`SessionQueue`), for the same reason. The others are taken once Redis
 * confirmed the lease after all their writes: an abort whose run end Redis refused is undone by
 * the takeover, which goes on with the run.
 */
const DECIDED_BY_FIRST_WRITE: ReadonlySet<Command["type"]> = new Set(["prompt", "approve", "deny"]);
const DECIDED_BY_QUEUE_WRITE: ReadonlySet<Command["type"]> = new Set(["steer", "follow_up"]);

/**
 * Runs `execute` (the command on the runner's Agent) and gives the answer for its `ack` only once
 * Redis has stored what the command wrote (issue 28: a process stalled past its lease between
 * taking it for a prompt and the prompt's first write answered `ack`, then Redis refused
 * everything of the run, and no process ever ran the prompt). Returns `onAck`, called by the
 * command's replies in place of the ack: it sends the confirmation at once, behind the command's
 * writes on the same connection, and resolves with the frame to send.
 */
export function confirmAck(runner: SessionRunner, command: Command): { onAck: (ack: ServerFrame) => Promise<ServerFrame>; done: () => void } {
  const firstWrite = DECIDED_BY_QUEUE_WRITE.has(command.type) ? runner.store.queue?.watchNextAdd() : DECIDED_BY_FIRST_WRITE.has(command.type) ? runner.store.watchNextWrite() : undefined;
  return {
    onAck: (ack) => {
      const stored = firstWrite?.() ?? runner.confirmWrites();
      return stored.then(
        (taken) => (taken ? ack : errorFrame(command.id, "session_moved", sessionMovedText(command.type))),
        (error: unknown) => errorFrame(command.id, "internal", `Redis did not confirm this ${command.type} (${errorText(error)}): it may or may not have been taken; look at the session before sending it again.`),
      );
    },
    // A command refused by the Agent wrote nothing: the next write is not its.
    done: () => void firstWrite?.(),
  };
}
