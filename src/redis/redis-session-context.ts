import type { Agent } from "../agent/agent.js";
import type { ProtocolVersion } from "../protocol/protocol-schemas.js";
import type { CommandReplies } from "../server/hosted-session.js";
import type { ScriptedRedis } from "./redis-scripts.js";
import type { RedisTranscriptStore } from "./redis-transcript-store.js";

/** What every session of one process shares: the connections, the settings, the reply routing. */
export interface RedisSessionContext {
  /** Commands, scripts, the transcript store. */
  readonly redis: ScriptedRedis;
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly maxEvents: number;
  readonly eventTtlMs: number;
  /** The protocol of the frames this process's runners write. */
  readonly protocol: ProtocolVersion;
  /** How long, and how many bytes, a runner's transcript appends may wait for Redis. */
  readonly saveBounds: { saveTimeoutMs?: number; maxPendingBytes?: number };
  /** Takeovers of one run without a transcript append before it ends as failed. */
  readonly maxTakeovers: number;
  /** How long a command forwarded to another process waits for its answer. */
  readonly commandTimeoutMs: number;
  /** This process's channel for answers to the commands it forwards. */
  readonly replyChannel: string;
  /** Unique per process, the start of every lease token it takes. */
  readonly processId: string;
  createAgent(sessionId: string, store: RedisTranscriptStore): Agent | Promise<Agent>;
  warn(message: string): void;
  /** Routes the messages of `channel` to `handler` (subscribing once the first handler comes). */
  listen(channel: string, handler: (message: string) => void): Promise<void>;
  unlisten(channel: string): void;
  /** Sends the answer that comes back for `replyId` to `replies` (released, since they were held), or an error after the timeout. */
  expectReply(replyId: string, commandId: string, replies: CommandReplies): void;
  /** The answer for `replyId` will not come: forget it. */
  forgetReply(replyId: string): void;
}
