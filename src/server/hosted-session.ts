import type { Agent } from "../agent/agent.js";
import type { ClientCommand, ProtocolVersion, ServerFrame, SnapshotFrame } from "../protocol/protocol-schemas.js";
import type { ClientStats } from "./backpressure.js";
import type { ClientConnection } from "./client-connection.js";

/** Where the answer to one command goes: the client that sent it, or a process that forwarded it. */
export interface CommandReplies {
  sendFrame(frame: ServerFrame): void;
  /** Holds the client's event frames back until `release`, so the ack goes out before the events its command caused. */
  hold(): void;
  release(frameFirst: ServerFrame): void;
}

/**
 * What the server needs of one session: `SessionHub` when the session lives in this process,
 * the session of `rxagent/redis` when several processes share it.
 */
export interface HostedSession {
  readonly id: string;
  /** The sequence number of the latest event (0 before the first). */
  readonly lastSeq: number;
  /** Changes on `reset`; a client that resumes from another epoch gets a snapshot. */
  readonly epoch: string;
  readonly clientCount: number;
  /** True while a run of the session lives (in this process, or on Redis in another one). */
  readonly isRunning: boolean;
  /** The protocol its frames are written in (the attach `ack` says it); default `PROTOCOL_VERSION`. */
  readonly protocol?: ProtocolVersion;
  /** The session's Agent when this process holds one. */
  readonly agent: Agent | undefined;
  clientStats(): ClientStats[];
  /** The state after `lastSeq`. */
  snapshot(): SnapshotFrame;
  /** How a client that last saw `lastSeq` (in `epoch`) catches up. */
  resumeMode(lastSeq: number | undefined, epoch?: string): "replay" | "snapshot";
  /** Adds a client and sends it the backlog the way `resumeMode` said. */
  attach(client: ClientConnection, lastSeq: number | undefined, epoch?: string): void;
  detach(client: ClientConnection): void;
  /** Runs one command; the ack or error goes to `replies` only. */
  execute(command: Exclude<ClientCommand, { type: "attach" }>, replies: CommandReplies): void;
  /** Aborts a run this process holds and resolves once it has ended (or after `timeoutMs`). */
  stop(timeoutMs: number): Promise<void>;
  /** Stops serving the session in this process. */
  close(): void;
}
