import type { IncomingMessage, Server } from "node:http";
import type { SchedulerLike } from "rxjs";
import type { Agent } from "../agent/agent.js";
import type { BackpressureOptions, ClientStats } from "./backpressure.js";
import type { EventLog, EventLogOptions } from "./event-log.js";
import type { HostedSession } from "./hosted-session.js";
import type { RateLimitOptions } from "./rate-limiter.js";
import type { ProtocolVersion } from "../protocol/protocol-schemas.js";

/** The configuration of `serveAgents` and what it returns. */

export interface ServeAgentsOptions {
  /** Share an existing HTTP server (then `path` picks the WebSocket endpoint), or give `port`. */
  server?: Server;
  /** Port to listen on when no `server` is given; 0 picks a free one. */
  port?: number;
  /** Default `"127.0.0.1"`: listening beyond loopback is a decision to make explicitly. */
  host?: string;
  /** Only upgrades on this path are accepted, e.g. `"/ws"`. Default: any path. */
  path?: string;
  /**
   * Makes the agent of a session the first time a client attaches to it.
   *
   * Contract: return `undefined` to refuse the id (the client gets `unknown_session`); the
   * server never disposes the agent (see `onSessionClose`).
   * @example createAgent: (sessionId) => new Agent({ model, tools })
   */
  createAgent(sessionId: string, request: IncomingMessage): Agent | undefined | Promise<Agent | undefined>;
  /**
   * Checks the token of an upgrade request (`Authorization: Bearer <token>` or `?token=`).
   * Contract: false refuses the upgrade: HTTP 401, or for a browser (a request with an `Origin`)
   * an accepted socket closed at once with 4401 and a reason the page can show.
   * @example auth: acceptToken(process.env.RXAGENT_TOKEN)
   */
  auth?: (token: string | undefined, request: IncomingMessage) => boolean | Promise<boolean>;
  /**
   * `Origin` values browsers may connect from besides the server's own page's (on loopback
   * `http://localhost:<port>`, `http://127.0.0.1:<port>` and `http://[::1]:<port>`; else
   * `http://<host>:<port>`); others are refused (HTTP 403 for clients without the page to show
   * it, else a socket closed with 4403). Requests without an Origin (non-browser clients) pass.
   *
   * Contract: secure by default: any other site the user visits could otherwise drive the agent
   * and its tools through the browser (cross-site WebSocket hijacking). `"*"` lets every origin in,
   * for a server that checks tokens itself; served beyond loopback or behind a proxy, list your
   * page's origin.
   * @example allowedOrigins: ["https://app.example.com"]
   */
  allowedOrigins?: readonly string[] | "*";
  /** Largest incoming frame in bytes; a larger one closes the socket with 1009. Default 1 MiB. */
  maxPayload?: number;
  /** Sessions held at once; when full, the least recently used idle session without clients is closed to make room. Default 100. */
  maxSessions?: number;
  /** Commands per connection; `false` turns the limit off. */
  rateLimit?: RateLimitOptions | false;
  /** Ping period; a socket that misses one pong is terminated. 0 disables. Default 30 000. */
  heartbeatIntervalMs?: number;
  /**
   * A socket that has not attached this long after connecting is closed (4000): it holds
   * memory and a slot without using them. 0 disables. Default 30 000.
   */
  attachTimeoutMs?: number;
  /**
   * A socket that sent no command for this long while its session was not running is closed
   * (4000), so its session can be evicted when the server is full. 0 disables. Default 1 800 000
   * (30 minutes).
   */
  idleTimeoutMs?: number;
  backpressure?: BackpressureOptions;
  eventLog?: EventLogOptions;
  /**
   * The protocol the sessions' frames are written in (PROTOCOL.md). 3 sends a tool call's streamed
   * arguments once, as the fragments of its `toolcall_delta`s, where 2 also sends them re-parsed
   * as they grow, and ends a streamed message with a patch (an `end` frame) where 2 sends the
   * whole message again: 1 MB of arguments in 1 KB deltas costs 1.2 MB of frames up to the
   * message's end instead of 5.5 MB, and the server holds as much less.
   *
   * Contract: a client that does not offer the `rxagent.3` subprotocol (one written for version 2)
   * gets version 2, rewritten for it as it is sent. Sessions of `hostSession` are written in their
   * own (on Redis, `redisSessions`' `protocol`). A value other than 2 or 3 is a TypeError. Default 3.
   * @example protocol: 2
   */
  protocol?: ProtocolVersion;
  /**
   * Makes the event log of a new session; default an in-memory `MemoryEventLog` sized by
   * `eventLog`. Contract: a fresh, empty log per session.
   */
  createEventLog?: (sessionId: string) => EventLog;
  /**
   * Hosts sessions somewhere other than this process, in place of `createAgent` (which is then
   * not called): `redisSessions(...).hostSession` of `rxagent/redis` shares them through Redis.
   *
   * Contract: a new session object per call, or `undefined` to refuse the id; the server closes it.
   */
  hostSession?: (sessionId: string, request: IncomingMessage) => HostedSession | undefined | Promise<HostedSession | undefined>;
  /** How long `close()` waits for runs to end and queues to drain. Default 10 000. */
  shutdownTimeoutMs?: number;
  /** Clock for the heartbeat and the rate limit. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /**
   * Called when a session is closed (evicted, or at shutdown), to persist or dispose its agent.
   * One that throws or rejects is reported to `onWarning`; the session closes all the same.
   */
  onSessionClose?: (sessionId: string, agent: Agent) => void;
  /** Told about problems that must not stop the server: an `onSessionClose` that failed, or `serveWebUi`'s `handleRequest` that threw. Default: `console.warn`. */
  onWarning?: (message: string) => void;
}

export interface SessionInfo {
  agent: Agent;
  lastSeq: number;
  clients: ClientStats[];
}

export interface AgentServer {
  /** `ws://host:port/path`. */
  readonly url: string;
  readonly port: number;
  session(id: string): SessionInfo | undefined;
  sessionIds(): string[];
  /** Aborts active runs, waits for their `agent_end`, closes every socket with 1001. */
  close(): Promise<void>;
}

