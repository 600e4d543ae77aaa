import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { asyncScheduler, type SchedulerLike } from "rxjs";
import { type WebSocket, WebSocketServer } from "ws";
import { errorText } from "../errors.js";
import type { Agent } from "../streams/agent.js";
import { type BackpressureOptions, ClientConnection, type ClientStats } from "./client-connection.js";
import { Heartbeat } from "./heartbeat.js";
import { type ClientCommand, parseClientFrame, PROTOCOL_VERSION } from "../protocol/protocol-schemas.js";
import { RateLimiter, type RateLimitOptions } from "./rate-limiter.js";
import { errorFrame, SessionHub } from "./session-hub.js";
import type { EventLog, EventLogOptions } from "./event-log.js";
import { type UpgradeRefusal, verifyUpgrade } from "./verify-upgrade.js";

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
   * `Origin` values browsers may connect from; others are refused (HTTP 403 for clients
   * without the page to show it, else a socket closed with 4403). Requests without an Origin
   * (non-browser clients) pass.
   */
  allowedOrigins?: readonly string[];
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
   * Makes the event log of a new session; default an in-memory `MemoryEventLog` sized by
   * `eventLog`. Contract: a fresh, empty log per session.
   */
  createEventLog?: (sessionId: string) => EventLog;
  /** How long `close()` waits for runs to end and queues to drain. Default 10 000. */
  shutdownTimeoutMs?: number;
  /** Clock for the heartbeat and the rate limit. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Called when a session is closed (evicted, or at shutdown), to persist or dispose its agent. */
  onSessionClose?: (sessionId: string, agent: Agent) => void;
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

interface Peer {
  socket: WebSocket;
  request: IncomingMessage;
  connection: ClientConnection;
  hub: SessionHub | undefined;
  limiter: RateLimiter | undefined;
  /** Commands run one after another, since an attach may wait for `createAgent`. */
  chain: Promise<void>;
  /** When the socket connected or last sent a command (scheduler time). */
  activeAt: number;
  /** Set once the server has decided to close it: its frames are ignored from then on. */
  closing: boolean;
  /** Commands refused by the rate limit since the last one accepted. */
  refusedInARow: number;
}

/** Close codes of the server (PROTOCOL.md, "Close codes"). */
const CLOSE_IDLE = 4000;
const CLOSE_OVER_BUDGET = 1008;
/** After a policy close the socket gets this long to finish the handshake; a client that does not read never will. */
const CLOSE_GRACE_MS = 1000;

/**
 * Serves agents over WebSocket: many sessions per server, many clients per session, the JSON
 * protocol of PROTOCOL.md with every incoming frame validated.
 *
 * @example
 * const server = await serveAgents({ port: 8787, createAgent: () => new Agent({ model }) });
 */
export async function serveAgents(options: ServeAgentsOptions): Promise<AgentServer> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const maxSessions = options.maxSessions ?? 100;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
  const sessions = new Map<string, SessionHub>();
  const pending = new Map<string, Promise<SessionHub | "unknown_session">>();
  const peers = new Set<Peer>();
  const heartbeat = new Heartbeat(options.heartbeatIntervalMs ?? 30_000, scheduler);
  const attachTimeoutMs = options.attachTimeoutMs ?? 30_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30 * 60_000;
  const refusals = new WeakMap<IncomingMessage, UpgradeRefusal>();
  const closeAfterRefusals = (options.rateLimit === false ? undefined : options.rateLimit?.closeAfterRefusals) ?? 200;
  let closing = false;

  const wss = new WebSocketServer({
    ...(options.server ? { server: options.server } : { port: options.port ?? 0, host: options.host ?? "127.0.0.1" }),
    ...(options.path === undefined ? {} : { path: options.path }),
    maxPayload: options.maxPayload ?? 1024 * 1024,
    verifyClient: (info, callback) => {
      if (closing) return callback(false, 503, "Server shutting down");
      verifyUpgrade(info, options).then(
        (refusal) => {
          if (!refusal) return callback(true);
          // A browser learns nothing from an HTTP refusal (its socket just fails), so it gets a
          // socket closed with a code and a reason its page can show.
          if (info.origin === undefined) return callback(false, refusal.status, refusal.message);
          refusals.set(info.req, refusal);
          callback(true);
        },
        () => callback(false, 500, "Authentication failed"),
      );
    },
  });
  if (!options.server) {
    await new Promise<void>((resolve, reject) => {
      wss.once("listening", resolve);
      wss.once("error", reject);
    });
  }

  wss.on("connection", (socket, request) => {
    const refusal = refusals.get(request);
    if (refusal) {
      socket.on("error", () => undefined);
      socket.close(refusal.status === 401 ? 4401 : 4403, refusal.message);
      return;
    }
    const peer: Peer = {
      socket,
      request,
      connection: new ClientConnection(socket, () => JSON.stringify(peer.hub?.snapshot()), options.backpressure, () =>
        closeForPolicy(peer, CLOSE_OVER_BUDGET, "Too many unread replies: read the socket or send fewer commands"),
      ),
      hub: undefined,
      limiter: options.rateLimit === false ? undefined : new RateLimiter(options.rateLimit ?? {}, () => scheduler.now()),
      chain: Promise.resolve(),
      activeAt: scheduler.now(),
      closing: false,
      refusedInARow: 0,
    };
    peers.add(peer);
    armSweep();
    heartbeat.watch(socket);
    // ws reports protocol violations (a frame over maxPayload: 1009) here, then closes.
    socket.on("error", () => undefined);
    socket.on("close", () => {
      peers.delete(peer);
      heartbeat.forget(socket);
      peer.hub?.detach(peer.connection);
    });
    socket.on("message", (data, isBinary) => {
      if (peer.closing) return;
      const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as ArrayBuffer).toString("utf8");
      // Limited here, as the frame arrives, and before parsing: a command waiting behind a slow
      // attach must not slip past the limit, and a flood costs as little as it can.
      if (peer.limiter && !peer.limiter.tryTake()) {
        if (++peer.refusedInARow >= closeAfterRefusals) return closeForPolicy(peer, CLOSE_OVER_BUDGET, "Rate limit exceeded: closing a flooding connection");
        peer.connection.sendFrame(errorFrame(idOf(text), "rate_limited", "Too many commands: slow down; this one was dropped."));
        return;
      }
      peer.refusedInARow = 0;
      peer.activeAt = scheduler.now();
      if (isBinary) {
        peer.connection.sendFrame(errorFrame(undefined, "invalid_frame", "Binary frames are not accepted: send each command as a JSON text frame."));
        return;
      }
      const parsed = parseClientFrame(text);
      peer.chain = peer.chain.then(() => receive(peer, parsed)).catch((error: unknown) => {
        peer.connection.sendFrame(errorFrame(undefined, "internal", errorText(error)));
      });
    });
  });

  async function receive(peer: Peer, parsed: ReturnType<typeof parseClientFrame>): Promise<void> {
    if (!parsed.ok) {
      peer.connection.sendFrame(errorFrame(parsed.id, parsed.code, parsed.message));
      return;
    }
    const command = parsed.command;
    if (command.type === "attach") return attach(peer, command);
    if (!peer.hub) {
      peer.connection.sendFrame(errorFrame(command.id, "not_attached", `Send "attach" before "${command.type}".`));
      return;
    }
    peer.hub.execute(command, peer.connection);
  }

  async function attach(peer: Peer, command: Extract<ClientCommand, { type: "attach" }>): Promise<void> {
    const sessionId = command.session ?? randomUUID();
    const found = await sessionFor(sessionId, peer.request).catch((error: unknown) => {
      peer.connection.sendFrame(errorFrame(command.id, "internal", `createAgent failed: ${errorText(error)}`));
      return undefined;
    });
    if (found === undefined) return;
    if (!(found instanceof SessionHub)) {
      const message = found === "session_limit" ? sessionLimitMessage() : `No session "${sessionId}" here, and the server would not create it.`;
      peer.connection.sendFrame(errorFrame(command.id, found, message));
      return;
    }
    const hub = found;
    // The socket may have gone while createAgent ran; a dead client must not join the hub.
    if (peer.socket.readyState !== peer.socket.OPEN) return;
    peer.hub?.detach(peer.connection);
    peer.connection.dropEvents();
    peer.hub = hub;
    const resume = hub.resumeMode(command.lastSeq, command.epoch);
    peer.connection.sendFrame({ type: "ack", id: command.id, session: sessionId, resume, epoch: hub.epoch, protocol: PROTOCOL_VERSION });
    hub.attach(peer.connection, command.lastSeq, command.epoch);
  }

  /** The session's hub, created on first use, or why there is none. */
  async function sessionFor(sessionId: string, request: IncomingMessage): Promise<SessionHub | "session_limit" | "unknown_session"> {
    const existing = sessions.get(sessionId);
    if (existing) {
      // Map order is recency order for eviction.
      sessions.delete(sessionId);
      sessions.set(sessionId, existing);
      return existing;
    }
    const inFlight = pending.get(sessionId);
    if (inFlight) return inFlight;
    if (sessions.size + pending.size >= maxSessions && !evictOne()) return "session_limit";
    const creation = Promise.resolve(options.createAgent(sessionId, request)).then((agent) => {
      if (!agent) return "unknown_session" as const;
      if (closing) {
        // Made while the server shut down: it never joins, but its owner still hears it closed.
        options.onSessionClose?.(sessionId, agent);
        return "unknown_session" as const;
      }
      const hub = new SessionHub(sessionId, agent, options.eventLog, options.createEventLog?.(sessionId));
      sessions.set(sessionId, hub);
      return hub;
    });
    pending.set(sessionId, creation);
    try {
      return await creation;
    } finally {
      pending.delete(sessionId);
    }
  }

  function sessionLimitMessage(): string {
    const hubs = [...sessions.values()];
    const attached = hubs.filter((hub) => hub.clientCount > 0).length;
    const running = hubs.filter((hub) => hub.clientCount === 0 && hub.agent.isRunning).length;
    return (
      `The server holds ${sessions.size + pending.size} of at most ${maxSessions} sessions: ${attached} with clients attached, ` +
      `${running} running without clients, ${pending.size} being created; none can be closed to make room. Try again later.`
    );
  }

  /** Closes a socket the server gave up on, and stops reading it at once. */
  function closeForPolicy(peer: Peer, code: number, reason: string): void {
    if (peer.closing) return;
    peer.closing = true;
    peer.hub?.detach(peer.connection);
    peer.socket.close(code, reason);
    setTimeout(() => peer.socket.terminate(), CLOSE_GRACE_MS).unref();
  }

  /**
   * Closes sockets that never attached and sockets idle while their session rests. One sweep for
   * all sockets, not a timer each: rescheduling a timer per incoming frame would make a flood
   * costlier still.
   */
  let sweep: { unsubscribe(): void } | undefined;
  function armSweep(): void {
    const periods = [attachTimeoutMs, idleTimeoutMs].filter((period) => period > 0);
    if (sweep || periods.length === 0) return;
    const period = Math.max(10, Math.min(...periods) / 4);
    sweep = scheduler.schedule(function () {
      const now = scheduler.now();
      for (const peer of peers) {
        const quiet = now - peer.activeAt;
        if (!peer.hub && attachTimeoutMs > 0 && quiet >= attachTimeoutMs) closeForPolicy(peer, CLOSE_IDLE, "No attach in time");
        else if (peer.hub && idleTimeoutMs > 0 && quiet >= idleTimeoutMs && !peer.hub.agent.isRunning) closeForPolicy(peer, CLOSE_IDLE, "Idle");
      }
      if (peers.size === 0 || closing) {
        sweep = undefined;
        return;
      }
      this.schedule(undefined, period);
    }, period);
  }

  function evictOne(): boolean {
    for (const [id, hub] of sessions) {
      if (hub.clientCount === 0 && !hub.agent.isRunning) {
        closeSession(id, hub);
        return true;
      }
    }
    return false;
  }

  function closeSession(id: string, hub: SessionHub): void {
    sessions.delete(id);
    hub.close();
    options.onSessionClose?.(id, hub.agent);
  }

  const address = wss.address() ?? options.server?.address();
  const port = typeof address === "object" && address !== null ? (address as AddressInfo).port : 0;
  const host = options.host ?? "127.0.0.1";

  return {
    url: `ws://${host}:${port}${options.path ?? ""}`,
    port,
    session(id) {
      const hub = sessions.get(id);
      return hub && { agent: hub.agent, lastSeq: hub.lastSeq, clients: hub.clientStats() };
    },
    sessionIds: () => [...sessions.keys()],
    async close() {
      if (closing) return;
      closing = true;
      heartbeat.stop();
      sweep?.unsubscribe();
      await Promise.all([...sessions.values()].map((hub) => hub.stop(shutdownTimeoutMs)));
      await withTimeout(Promise.all([...peers].map((peer) => peer.connection.whenIdle())), shutdownTimeoutMs);
      const closed = [...peers].map((peer) => new Promise<void>((resolve) => {
        peer.socket.once("close", () => resolve());
        peer.socket.close(1001, "Server shutting down");
      }));
      if (!(await withTimeout(Promise.all(closed), shutdownTimeoutMs))) {
        for (const peer of peers) peer.socket.terminate();
      }
      for (const [id, hub] of [...sessions]) closeSession(id, hub);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** The `id` of a frame, when it is small enough to look at cheaply (for a refusal's reply). */
function idOf(text: string): string | undefined {
  if (text.length > 4096) return undefined;
  try {
    const id = (JSON.parse(text) as { id?: unknown } | null)?.id;
    return typeof id === "string" && id.length <= 64 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** True when `promise` settled before the timeout. */
async function withTimeout(promise: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const settled = await Promise.race([promise.then(() => true), timeout]);
  clearTimeout(timer);
  return settled;
}
