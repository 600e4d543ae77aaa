import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { asyncScheduler } from "rxjs";
import type { WebSocket } from "ws";
import { errorText } from "../errors.js";
import { callDetached, warnerOf } from "../util/detached-callback.js";
import { ClientConnection } from "./client-connection.js";
import { Heartbeat } from "./heartbeat.js";
import { IdleSweep, type SweptConnection } from "./idle-sweep.js";
import { type ClientCommand, parseClientFrame, PROTOCOL_3_SUBPROTOCOL, PROTOCOL_VERSION, protocolVersionOf } from "../protocol/protocol-schemas.js";
import { corkableOf } from "./corked-writes.js";
import { RateLimiter } from "./rate-limiter.js";
import { repairedJson } from "../util/repaired-json.js";
import type { HostedSession } from "./hosted-session.js";
import { errorFrame, SessionHub } from "./session-hub.js";
import { pageOrigins, type UpgradePolicy, type UpgradeRefusal, verifyUpgrade } from "./verify-upgrade.js";
import type { AgentServer, ServeAgentsOptions } from "./serve-agents-options.js";
import { problemOfAgent } from "../agent/problem-of-agent.js";

export type { AgentServer, ServeAgentsOptions, SessionInfo } from "./serve-agents-options.js";

interface Peer extends SweptConnection {
  socket: WebSocket;
  request: IncomingMessage;
  connection: ClientConnection;
  hub: HostedSession | undefined;
  limiter: RateLimiter | undefined;
  /** Commands run one after another, since an attach may wait for `createAgent`. */
  chain: Promise<void>;
  activeAt: number;
  /** Set once the server has decided to close it: its frames are ignored from then on. */
  closing: boolean;
  /** Commands refused by the rate limit since the last one accepted. */
  refusedInARow: number;
  /** Whether its socket offered the `rxagent.3` subprotocol; a client that did not gets protocol 2. */
  readsProtocol3: boolean;
}

/** Close codes of the server (PROTOCOL.md, "Close codes"). */
const CLOSE_IDLE = 4000;
const CLOSE_OVER_BUDGET = 1008;
/** A frame for the client could not be made or sent (the server's own failure). */
const CLOSE_BROKEN = 1011;
/** After a policy close the socket gets this long to finish the handshake; a client that does not read never will. */
const CLOSE_GRACE_MS = 1000;

/**
 * `ws`, loaded when a server starts rather than when `rxagent/server` is imported, so what
 * opens no socket (`JsonlTranscriptStore`) works without the optional package installed.
 */
function importWs(): Promise<typeof import("ws")> {
  return import("ws").catch((error: unknown) => {
    throw new Error(`serveAgents needs the optional package ws: npm install ws (${(error as Error).message})`);
  });
}

/**
 * Serves agents over WebSocket: many sessions per server, many clients per session, the JSON
 * protocol of PROTOCOL.md with every incoming frame validated.
 *
 * @example
 * const server = await serveAgents({ port: 8787, createAgent: () => new Agent({ model }) });
 */
export async function serveAgents(options: ServeAgentsOptions): Promise<AgentServer> {
  // First: a missing package must fail before any timer (sweep, heartbeat) is started.
  const { WebSocketServer } = await importWs();
  const protocol = protocolVersionOf(options.protocol, "serveAgents' protocol");
  const scheduler = options.scheduler ?? asyncScheduler;
  const maxSessions = options.maxSessions ?? 100;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
  const warn = warnerOf(options.onWarning);
  const sessions = new Map<string, HostedSession>();
  const pending = new Map<string, Promise<HostedSession | "unknown_session">>();
  const peers = new Set<Peer>();
  const sweep = new IdleSweep(
    { attachTimeoutMs: options.attachTimeoutMs ?? 30_000, idleTimeoutMs: options.idleTimeoutMs ?? 30 * 60_000 },
    peers,
    (peer, reason) => closeForPolicy(peer, CLOSE_IDLE, reason),
    scheduler,
  );
  const heartbeat = new Heartbeat(options.heartbeatIntervalMs ?? 30_000, scheduler);
  const refusals = new WeakMap<IncomingMessage, UpgradeRefusal>();
  const closeAfterRefusals = (options.rateLimit === false ? undefined : options.rateLimit?.closeAfterRefusals) ?? 200;
  let closing = false;

  const wss = new WebSocketServer({
    ...(options.server ? { server: options.server } : { port: options.port ?? 0, host: options.host ?? "127.0.0.1" }),
    ...(options.path === undefined ? {} : { path: options.path }),
    maxPayload: options.maxPayload ?? 1024 * 1024,
    // `rxagent.3` when offered (the client reads protocol 3); otherwise the first offered, as ws does unless told.
    handleProtocols: (offered) => (offered.has(PROTOCOL_3_SUBPROTOCOL) ? PROTOCOL_3_SUBPROTOCOL : (offered.values().next().value ?? false)),
    verifyClient: (info, callback) => {
      if (closing) return callback(false, 503, "Server shutting down");
      verifyUpgrade(info, upgradePolicy()).then(
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
      connection: new ClientConnection(
        socket,
        () => repairedJson(peer.hub?.snapshot()),
        options.backpressure,
        () => closeForPolicy(peer, CLOSE_OVER_BUDGET, "Too many unread replies: read the socket or send fewer commands"),
        (reason) => closeForPolicy(peer, CLOSE_BROKEN, reason.slice(0, 120)),
        corkableOf(socket),
      ),
      hub: undefined,
      limiter: options.rateLimit === false ? undefined : new RateLimiter(options.rateLimit ?? {}, () => scheduler.now()),
      chain: Promise.resolve(),
      activeAt: scheduler.now(),
      closing: false,
      refusedInARow: 0,
      readsProtocol3: socket.protocol === PROTOCOL_3_SUBPROTOCOL,
      get attached() {
        return peer.hub !== undefined;
      },
      get busy() {
        return peer.hub?.isRunning === true;
      },
    };
    if (!peer.readsProtocol3) peer.connection.readsOnlyProtocol2();
    peers.add(peer);
    sweep.arm();
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
      peer.connection.sendFrame(errorFrame(command.id, "internal", `${options.hostSession ? "Could not open the session" : "createAgent failed"}: ${errorText(error)}`));
      return undefined;
    });
    if (found === undefined) return;
    if (typeof found === "string") {
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
    const protocol = hub.protocol ?? PROTOCOL_VERSION;
    // A client that gets protocol 3 rewritten into 2 starts from a snapshot: the rewrite follows
    // the message a frame patches, and a replay may begin in the middle of one.
    const lastSeq = protocol >= 3 && !peer.readsProtocol3 ? undefined : command.lastSeq;
    const resume = hub.resumeMode(lastSeq, command.epoch);
    peer.connection.sendFrame({ type: "ack", id: command.id, session: sessionId, resume, epoch: hub.epoch, protocol });
    hub.attach(peer.connection, lastSeq, command.epoch);
  }

  /** The session's hub, created on first use, or why there is none. */
  async function sessionFor(sessionId: string, request: IncomingMessage): Promise<HostedSession | "session_limit" | "unknown_session"> {
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
    const creation = options.hostSession ? hosted(sessionId, request) : Promise.resolve(options.createAgent(sessionId, request)).then((agent) => {
      if (!agent) return "unknown_session" as const;
      const problem = problemOfAgent(agent);
      if (problem !== undefined) throw new TypeError(`it returned ${problem}.`);
      if (closing) {
        // Made while the server shut down: it never joins, but its owner still hears it closed.
        callDetached("onSessionClose", options.onSessionClose, [sessionId, agent], warn);
        return "unknown_session" as const;
      }
      const hub = new SessionHub(sessionId, agent, options.eventLog, options.createEventLog?.(sessionId), protocol);
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

  /** A session from `hostSession`, which the server then holds like its own. */
  async function hosted(sessionId: string, request: IncomingMessage): Promise<HostedSession | "unknown_session"> {
    const session = await (options.hostSession as NonNullable<ServeAgentsOptions["hostSession"]>)(sessionId, request);
    if (!session) return "unknown_session";
    if (closing) {
      session.close();
      return "unknown_session";
    }
    sessions.set(sessionId, session);
    return session;
  }

  function sessionLimitMessage(): string {
    const hubs = [...sessions.values()];
    const attached = hubs.filter((hub) => hub.clientCount > 0).length;
    const running = hubs.filter((hub) => hub.clientCount === 0 && hub.isRunning).length;
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

  function evictOne(): boolean {
    for (const [id, hub] of sessions) {
      if (hub.clientCount === 0 && !hub.isRunning) {
        closeSession(id, hub);
        return true;
      }
    }
    return false;
  }

  function closeSession(id: string, hub: HostedSession): void {
    sessions.delete(id);
    hub.close();
    if (hub.agent) callDetached("onSessionClose", options.onSessionClose, [id, hub.agent], warn);
  }

  /**
   * The origins of `allowedOrigins` and of the server's own page, read from where it listens at
   * each upgrade (a shared `server` may start listening after `serveAgents` returns).
   */
  function upgradePolicy(): UpgradePolicy {
    const auth = options.auth === undefined ? {} : { auth: options.auth };
    if (options.allowedOrigins === "*") return { ...auth, allowedOrigins: "*" };
    const listening = options.server ? options.server.address() : wss.address();
    const own = typeof listening === "object" && listening !== null ? pageOrigins(listening.address, listening.port) : [];
    return { ...auth, allowedOrigins: [...own, ...(options.allowedOrigins ?? [])] };
  }

  const address = wss.address() ?? options.server?.address();
  const port = typeof address === "object" && address !== null ? (address as AddressInfo).port : 0;
  const host = options.host ?? "127.0.0.1";

  return {
    url: `ws://${host}:${port}${options.path ?? ""}`,
    port,
    session(id) {
      const hub = sessions.get(id);
      return hub?.agent && { agent: hub.agent, lastSeq: hub.lastSeq, clients: hub.clientStats() };
    },
    sessionIds: () => [...sessions.keys()],
    async close() {
      if (closing) return;
      closing = true;
      heartbeat.stop();
      sweep.stop();
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
