import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { Redis } from "ioredis";
import { errorText } from "../errors.js";
import { type ProtocolVersion, protocolVersionOf, type ServerFrame } from "../protocol/protocol-schemas.js";
import { errorFrame } from "../server/execute-command.js";
import type { CommandReplies, HostedSession } from "../server/hosted-session.js";
import type { ServeAgentsOptions } from "../server/serve-agents-options.js";
import type { Agent } from "../agent/agent.js";
import { warnerOf } from "../util/detached-callback.js";
import type { ForwardedReply } from "./forwarded-command.js";
import { closeConnection, settledWithin } from "./close-connection.js";
import { withSessionScripts } from "./redis-scripts.js";
import type { RedisSessionContext } from "./redis-session-context.js";
import { RedisSession } from "./redis-session.js";
import type { RedisTranscriptStore } from "./redis-transcript-store.js";
import { DEFAULT_KEY_PREFIX } from "./session-keys.js";

export interface RedisSessionsOptions {
  /** A `redis://` URL, or an ioredis connection (it is duplicated once for pub/sub). */
  redis: string | Redis;
  /**
   * Makes the Agent of a session when this process is to run it, on the session's transcript.
   * Contract: open the agent on `store` (`Agent.open({ store, model, tools })`), so it starts from
   * the transcript and every message it ends is appended there.
   * @example createAgent: (sessionId, store) => Agent.open({ store, model, tools })
   */
  createAgent(sessionId: string, store: RedisTranscriptStore): Agent | Promise<Agent>;
  /** Default `"rxagent:"`. */
  keyPrefix?: string;
  /**
   * How long a run's lease lasts without renewal (renewed every third of it): a run whose process
   * died is taken over this long after its last renewal, at most. Default 10 000.
   */
  leaseMs?: number;
  /** Frames kept per session in its Redis stream (trimmed with `MAXLEN ~`). Default 10 000. */
  maxEvents?: number;
  /** A session's stream expires this long after its last frame. Default 86 400 000 (a day). */
  eventTtlMs?: number;
  /**
   * How many times in a row a run is taken over without saving anything new to its transcript
   * before the takeover ends it as failed instead of continuing it. Why: a run whose processes die
   * at the same point (a model reply or a tool that crashes the process) would otherwise crash
   * every process that takes it over, one after the other. Default 3.
   */
  maxTakeovers?: number;
  /**
   * How long a transcript append may wait for Redis (restarting, unreachable) before the run ends
   * as failed with a message saying the transcript could not be saved. Default 30 000.
   */
  saveTimeoutMs?: number;
  /** How many bytes of transcript appends may wait for Redis before the run ends as failed. Default 8 MiB. */
  maxPendingBytes?: number;
  /** How long a command sent to another process waits for its answer. Default: `leaseMs`. */
  commandTimeoutMs?: number;
  /**
   * The protocol the sessions' frames are written in (PROTOCOL.md; see `serveAgents`' `protocol`).
   * Contract: give every process sharing the sessions the same one, and choose 3 once every
   * process runs this version or later: a process reads the frames whichever process ran the
   * session wrote, and an older one cannot read protocol 3's (why the default is 2). A client
   * that does not read 3 gets the frames rewritten into 2 by the process it is connected to.
   * Default 2.
   * @example protocol: 3
   */
  protocol?: ProtocolVersion;
  /** Told about problems that must not stop the server (Redis refused a write, a lease was lost). Default: `console.warn`. */
  onWarning?: (message: string) => void;
}

/** How long `close()` waits for Redis to answer before it drops the connections. */
const CLOSE_TIMEOUT_MS = 2000;

/** Sessions on Redis for one process; give `serveOptions` to `serveAgents` or `serveWebUi`. */
export interface RedisSessions {
  /** `createAgent` and `hostSession` for `serveAgents` / `serveWebUi`. */
  readonly serveOptions: Pick<ServeAgentsOptions, "createAgent" | "hostSession">;
  hostSession(sessionId: string): Promise<HostedSession>;
  /**
   * Resolves once Redis answers a `PING`; rejects, naming the URL, when it does not within
   * `timeoutMs` (default 5000). Why: ioredis queues commands while it reconnects, so a server on
   * a wrong URL would otherwise start and fail only at the first client.
   */
  ready(timeoutMs?: number): Promise<void>;
  /** Closes the connections (after the server closed its sessions); within about 2 s when Redis is down. */
  close(): Promise<void>;
}

/**
 * Shares sessions between processes (and machines) through Redis: any process serves any
 * session's clients, one process at a time runs it (a lease), commands reach that process
 * through Redis, and a run whose process died is taken over by another. README, "Several
 * processes on Redis".
 *
 * @example
 * const redis = redisSessions({ redis: "redis://localhost:6379", createAgent: (id, store) => Agent.open({ store, model }) });
 * const server = await serveAgents({ port: 8787, ...redis.serveOptions });
 */
export function redisSessions(options: RedisSessionsOptions): RedisSessions {
  // Checked before any connection is made: a typo must not leave sockets open.
  const protocol = protocolVersionOf(options.protocol, "redisSessions' protocol", 2);
  const redis = withSessionScripts(typeof options.redis === "string" ? new Redis(options.redis) : options.redis);
  // ioredis's own resubscription after a reconnect is a promise nobody catches: a refusal
  // (NOPERM) or the connection dropping again before Redis answers it is an unhandled rejection,
  // which ends the process. This one is off; the "ready" handler below subscribes again instead.
  const subscriber = redis.duplicate({ autoResubscribe: false });
  const processId = randomUUID();
  const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const replyChannel = `${keyPrefix}process:${processId}`;
  const leaseMs = options.leaseMs ?? 10_000;
  const commandTimeoutMs = options.commandTimeoutMs ?? leaseMs;
  const warn = warnerOf(options.onWarning);
  const handlers = new Map<string, (message: string) => void>();
  const replies = new Map<string, { replies: CommandReplies; timer: ReturnType<typeof setTimeout> }>();
  const sessions = new Set<RedisSession>();
  // ioredis reports connection errors as events; without a listener Node would print each one.
  // Once per outage, not once per reconnection attempt.
  let connected = true;
  redis.on("error", (error: unknown) => {
    if (connected) warn(`Redis: ${errorText(error)}; reconnecting.`);
    connected = false;
  });
  redis.on("ready", () => (connected = true));
  subscriber.on("error", () => undefined);
  // Frames published while the channel was down are read from the streams, once Redis has
  // confirmed the channels again: a stream read before that missed every frame published between
  // the read and the subscription, and a watching process showed a run's end only once its orphan
  // check read the stream, up to `leaseMs / 2` after the lease was free (issue 28).
  let subscriberReady = false;
  subscriber.on("ready", () => {
    if (!subscriberReady) return void (subscriberReady = true);
    const confirmed = subscriber.subscribe(replyChannel, ...handlers.keys());
    confirmed.then(
      () => {
        for (const session of sessions) session.resync();
      },
      (error: unknown) => warn(`Redis: could not subscribe again after reconnecting: ${errorText(error)}`),
    );
  });
  subscriber.on("message", (channel: string, message: string) => {
    if (channel === replyChannel) return answer(message);
    handlers.get(channel)?.(message);
  });
  // The chain of subscribe and unsubscribe calls, in order; it never rejects (each caller hears its own failure).
  let subscribed: Promise<unknown> = subscriber.subscribe(replyChannel).catch((error: unknown) => warn(`Redis: could not subscribe to ${replyChannel}: ${errorText(error)}`));

  function answer(message: string): void {
    let reply: Partial<ForwardedReply> | null;
    try {
      reply = JSON.parse(message) as Partial<ForwardedReply> | null;
    } catch {
      // Thrown here it would be an uncaught exception inside ioredis's event handler.
      return warn(`Redis: a malformed reply on ${replyChannel} was ignored: ${message.slice(0, 80)}`);
    }
    if (typeof reply?.replyId !== "string" || reply.frame === undefined) return;
    const waiting = replies.get(reply.replyId);
    if (!waiting) return;
    replies.delete(reply.replyId);
    clearTimeout(waiting.timer);
    waiting.replies.release(reply.frame);
  }

  const context: RedisSessionContext = {
    redis,
    keyPrefix,
    leaseMs,
    maxEvents: options.maxEvents ?? 10_000,
    eventTtlMs: options.eventTtlMs ?? 86_400_000,
    protocol,
    maxTakeovers: options.maxTakeovers ?? 3,
    saveBounds: {
      ...(options.saveTimeoutMs === undefined ? {} : { saveTimeoutMs: options.saveTimeoutMs }),
      ...(options.maxPendingBytes === undefined ? {} : { maxPendingBytes: options.maxPendingBytes }),
    },
    commandTimeoutMs,
    replyChannel,
    processId,
    createAgent: (sessionId, store) => options.createAgent(sessionId, store),
    warn,
    async listen(channel, handler) {
      handlers.set(channel, handler);
      const done = subscribed.then(() => subscriber.subscribe(channel));
      subscribed = done.catch(() => undefined);
      await done;
    },
    unlisten(channel) {
      handlers.delete(channel);
      subscribed = subscribed.then(() => subscriber.unsubscribe(channel)).catch(() => undefined);
    },
    expectReply(replyId, commandId, waiting) {
      const timer = setTimeout(() => {
        replies.delete(replyId);
        const frame: ServerFrame = errorFrame(commandId, "internal", `The process running this session did not answer within ${commandTimeoutMs} ms.`);
        waiting.release(frame);
      }, commandTimeoutMs);
      timer.unref();
      replies.set(replyId, { replies: waiting, timer });
    },
    forgetReply(replyId) {
      const waiting = replies.get(replyId);
      if (waiting) clearTimeout(waiting.timer);
      replies.delete(replyId);
    },
  };

  async function hostSession(sessionId: string): Promise<HostedSession> {
    const session = await RedisSession.open(context, sessionId, (closed) => sessions.delete(closed));
    sessions.add(session);
    return session;
  }

  return {
    serveOptions: {
      createAgent: (_sessionId: string, _request: IncomingMessage) => undefined,
      hostSession: (sessionId) => hostSession(sessionId),
    },
    hostSession,
    ready(timeoutMs = 5000) {
      const where = typeof options.redis === "string" ? options.redis : "the given connection";
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`Redis at ${where} did not answer within ${timeoutMs} ms.`)), timeoutMs);
        redis.ping().then(
          () => {
            clearTimeout(timer);
            resolve();
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(new Error(`Redis at ${where}: ${errorText(error)}`));
          },
        );
      });
    },
    async close() {
      for (const session of [...sessions]) session.close();
      for (const { timer } of replies.values()) clearTimeout(timer);
      replies.clear();
      // Both bounded: a subscribe or a QUIT sent while Redis is down may never be answered.
      await settledWithin(subscribed, CLOSE_TIMEOUT_MS);
      await Promise.all([closeConnection(subscriber, CLOSE_TIMEOUT_MS), closeConnection(redis, CLOSE_TIMEOUT_MS)]);
    },
  };
}
