import { BehaviorSubject, type Observable, Subject, type SchedulerLike, asyncScheduler, type Subscription } from "rxjs";
import { RxAgentError } from "../errors.js";
import { initialAgentState, reduceAgentState } from "../agent/agent-state.js";
import type { AgentEvent, AgentState } from "../types.js";
import type { ClientCommandBody, ErrorCode, ServerFrame, WirePromptInput } from "../protocol/protocol-schemas.js";
import { PROTOCOL_3_SUBPROTOCOL } from "../protocol/protocol-version.js";
import { MessageDeltaDecoder } from "../protocol/message-delta-decoder.js";

/**
 * The standard WebSocket interface, as browsers have it and `ws` implements it. This file uses
 * nothing else (no Node imports), so the same client runs in Node and in a bundled page.
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code?: number; reason?: string }) => void): void;
  /** `ws` passes an event with the failure's `message` (a refused upgrade: "Unexpected server response: 401"); browsers tell nothing. */
  addEventListener(type: "error", listener: (event: { message?: string }) => void): void;
  addEventListener(type: "open", listener: () => void): void;
}

/** A WebSocket class: the browser's, or `ws`'s. `protocols` says which protocol versions the client reads. */
export type WebSocketConstructor = new (url: string, protocols?: string[]) => WebSocketLike;

export type ConnectionStatus = "connecting" | "open" | "reconnecting" | "closed";

export interface ConnectAgentOptions {
  /** Session to attach to; omit to start a new one (`session` tells its id once attached). */
  session?: string;
  /** Sent as `?token=`, because browsers cannot set headers on a WebSocket. */
  token?: string;
  /**
   * `WebSocket` from `ws` in Node (20 has no global one); defaults to `globalThis.WebSocket`.
   * Contract: a wrapper class passes its second argument (the subprotocols) on: without
   * `rxagent.3` the server sends protocol 2, rewritten for this client, and a reconnect starts
   * from a snapshot instead of a replay.
   */
  WebSocket?: WebSocketConstructor;
  /** Backoff between reconnect attempts; `false` never reconnects. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number; factor?: number } | false;
  /** Clock for the backoff timers. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
}

/** A command the server refused (its `error` frame), or one lost with the connection. */
export class RemoteCommandError extends RxAgentError {
  constructor(
    readonly code: ErrorCode | "connection_lost" | "closed" | "unauthorized" | "forbidden_origin",
    message: string,
  ) {
    super(message);
  }
}

/**
 * A remote agent. Commands return Promises: resolved when the server acks the command (a
 * prompt is acked once its run has started, not when it ends), rejected with a
 * `RemoteCommandError` on an `error` frame or when the connection drops before the ack. A
 * command answered `session_moved` (sessions on Redis: not taken) is sent again, up to 3 times.
 */
export interface AgentClient {
  /**
   * Events in order, hot. After a snapshot (a resync) events continue past what it covered; when
   * the snapshot covers the end of a run this client saw running, that run's `agent_end` (the
   * latest run's, if several ended) comes first.
   */
  readonly events$: Observable<AgentEvent>;
  /** Every frame from the server (fragments joined), for tools and tests. */
  readonly frames$: Observable<ServerFrame>;
  /** The session's state: the latest snapshot with every event since applied, replayed. */
  readonly state$: Observable<AgentState>;
  readonly status$: Observable<ConnectionStatus>;
  readonly state: AgentState;
  /** The session id once attached. */
  readonly session: string | undefined;
  /** The sequence number of the last event or snapshot applied. */
  readonly lastSeq: number;
  /** Resolves with the session id on the first successful attach. */
  readonly ready: Promise<string>;
  prompt(input: WirePromptInput): Promise<void>;
  steer(input: WirePromptInput): Promise<void>;
  followUp(input: WirePromptInput): Promise<void>;
  abort(options?: { clearFollowUps?: boolean }): Promise<void>;
  /** Cancels one tool call of the active run; rejects (`invalid_state`) unless it is unfinished. */
  cancelTool(toolCallId: string, reason?: string): Promise<void>;
  /** Answers a call in `state.pendingApprovals`; rejects (`invalid_state`) unless it waits. */
  approve(toolCallId: string): Promise<void>;
  deny(toolCallId: string, reason?: string): Promise<void>;
  continue(): Promise<void>;
  reset(): Promise<void>;
  /** Closes for good: no reconnect; pending commands are rejected. */
  close(): void;
}

interface PendingCommand {
  text: string;
  /** False while waiting for a connection: such a command survives a reconnect. */
  sent: boolean;
  /** Times the server answered `session_moved` and the command was sent again. */
  moves: number;
  resolve: () => void;
  reject: (error: RemoteCommandError) => void;
}

/**
 * How often a command answered `session_moved` is sent again. Why resend at all: the answer says
 * Redis never stored the command (its process lost the session first), so no process acts on it
 * and sending it again cannot run it twice; a few times, because each answer means the session
 * changed hands once more.
 */
const MAX_SESSION_MOVES = 3;

/**
 * Connects to an agent served by `serveAgents`, attaches to a session, and keeps it: on a lost
 * connection it reconnects with exponential backoff and resumes from the last sequence number;
 * a frame it cannot read or apply makes it attach again for a snapshot.
 *
 * @example
 * const client = connectAgent("ws://127.0.0.1:8787", { WebSocket });
 * client.events$.subscribe((event) => console.log(event.type));
 * await client.prompt("Hello");
 */
export function connectAgent(url: string, options: ConnectAgentOptions = {}): AgentClient {
  const WebSocketClass = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!WebSocketClass) throw new TypeError("connectAgent: no WebSocket here; pass { WebSocket } from the ws package.");
  const reconnect = options.reconnect === false ? undefined : { initialDelayMs: 250, maxDelayMs: 10_000, factor: 2, ...options.reconnect };
  const scheduler = options.scheduler ?? asyncScheduler;
  const events = new Subject<AgentEvent>();
  const frames = new Subject<ServerFrame>();
  const state = new BehaviorSubject<AgentState>(initialAgentState([]));
  const status = new BehaviorSubject<ConnectionStatus>("connecting");
  const pending = new Map<string, PendingCommand>();
  let session = options.session;
  let lastSeq: number | undefined;
  let epoch: string | undefined;
  /** Set while a run this client followed has not ended: the number it was last seen open at. */
  let openRunSeq: number | undefined;
  const decoder = new MessageDeltaDecoder();
  /** Pieces of a fragmented frame so far. */
  let fragments: string[] = [];
  let socket: WebSocketLike | undefined;
  let attachId: string | undefined;
  let attempts = 0;
  let retryTimer: Subscription | undefined;
  let closed = false;
  let nextId = 0;
  let resolveReady!: (session: string) => void;
  let rejectReady!: (error: RemoteCommandError) => void;
  const ready = new Promise<string>((resolve, reject) => ((resolveReady = resolve), (rejectReady = reject)));
  ready.catch(() => undefined);

  const open = () => {
    const query = options.token === undefined ? "" : `${url.includes("?") ? "&" : "?"}token=${encodeURIComponent(options.token)}`;
    // Offered so that the server sends protocol 3, which this client reads, and not 2 rewritten for it.
    const current = new WebSocketClass(url + query, [PROTOCOL_3_SUBPROTOCOL]);
    socket = current;
    current.addEventListener("open", () => sendAttach(current));
    current.addEventListener("message", (event) => {
      if (socket !== current || typeof event.data !== "string") return;
      try {
        const frame = JSON.parse(event.data) as ServerFrame;
        if (frame.type !== "fragment") return receive(frame, current);
        fragments.push(frame.data);
        if (!frame.final) return;
        const whole = fragments.join("");
        fragments = [];
        receive(JSON.parse(whole) as ServerFrame, current);
      } catch {
        // A frame this client cannot read or apply (not JSON, or an update for a message it does
        // not hold: a server of another protocol, a frame mangled on the way). What it holds may
        // no longer match the server's, so it starts again from a snapshot; a throw here would
        // leave the socket's handler, and in Node end the process.
        fragments = [];
        lastSeq = undefined;
        sendAttach(current);
      }
    });
    let refusedStatus: number | undefined;
    current.addEventListener("error", (event) => {
      const status = /Unexpected server response: (401|403)\b/.exec(event?.message ?? "")?.[1];
      if (status !== undefined) refusedStatus = Number(status);
    });
    current.addEventListener("close", (event) => {
      if (socket !== current) return;
      socket = undefined;
      attachId = undefined;
      fragments = [];
      failPending("connection_lost", "The connection closed before the server answered.");
      // Refused credentials or origin: trying again would get the same answer.
      const code = event.code === 4401 || refusedStatus === 401 ? 4401 : event.code === 4403 || refusedStatus === 403 ? 4403 : event.code;
      const refusal = code === 4401 ? "unauthorized" : code === 4403 ? "forbidden_origin" : undefined;
      if (refusal) {
        closed = true;
        rejectReady(new RemoteCommandError(refusal, event.reason || "The server refused the connection."));
      }
      if (closed || !reconnect) return finish();
      status.next("reconnecting");
      const delay = Math.min(reconnect.maxDelayMs, reconnect.initialDelayMs * reconnect.factor ** attempts++);
      retryTimer = scheduler.schedule(open, delay);
    });
  };

  const sendAttach = (current: WebSocketLike) => {
    attachId = `attach-${++nextId}`;
    const frame = {
      type: "attach",
      id: attachId,
      ...(session === undefined ? {} : { session }),
      ...(lastSeq === undefined ? {} : { lastSeq }),
      ...(lastSeq === undefined || epoch === undefined ? {} : { epoch }),
    };
    current.send(JSON.stringify(frame));
  };

  const receive = (frame: ServerFrame, current: WebSocketLike) => {
    frames.next(frame);
    switch (frame.type) {
      case "ack":
        if (frame.id === attachId) {
          attachId = undefined;
          attempts = 0;
          session = frame.session ?? session;
          epoch = frame.epoch ?? epoch;
          status.next("open");
          if (session !== undefined) resolveReady(session);
          for (const command of pending.values()) {
            if (!command.sent) (command.sent = true), current.send(command.text);
          }
        }
        return settle(frame.id);
      case "error":
        if (frame.id !== undefined && frame.id === attachId) {
          // The session is gone or refused: reconnecting would get the same answer.
          rejectReady(new RemoteCommandError(frame.code, frame.message));
          closed = true;
          current.close(1000, "Attach refused");
        }
        if (frame.code === "session_moved" && sendAgain(frame.id, current)) return;
        return settle(frame.id, new RemoteCommandError(frame.code, frame.message));
      case "snapshot": {
        lastSeq = frame.seq;
        epoch = frame.epoch;
        decoder.reset(frame.state.streamingMessage, frame.argumentTexts);
        state.next(frame.state);
        // A run followed here ended among the events the snapshot covers: its end is told, or a
        // consumer waiting for it would wait forever.
        const ended = frame.lastAgentEnd;
        if (openRunSeq !== undefined && ended !== undefined && ended.seq > openRunSeq) events.next(ended.event);
        openRunSeq = frame.state.isStreaming ? frame.seq : undefined;
        return;
      }
      case "update":
      case "end":
      case "event": {
        // Frames for the old stream can still arrive while a resync attach is in flight.
        if (attachId !== undefined) return;
        const first = frame.type === "end" ? frame.seq : (frame.first ?? frame.seq);
        if (lastSeq !== undefined && frame.seq <= lastSeq) return;
        if (lastSeq !== undefined && first !== lastSeq + 1) {
          // A gap (should not happen): ask the server to replay from what we have.
          sendAttach(current);
          return;
        }
        lastSeq = frame.seq;
        const event = frame.type === "update" ? decoder.decode(frame) : frame.type === "end" ? decoder.end(frame) : frame.event;
        if (frame.type === "event") decoder.observe(event);
        if (event.type === "agent_start") openRunSeq = frame.seq;
        else if (event.type === "agent_end") openRunSeq = undefined;
        state.next(reduceAgentState(state.value, event));
        events.next(event);
      }
    }
  };

  /** Sends a command that was not taken (`session_moved`) again; false once it moved too often. */
  const sendAgain = (id: string | undefined, current: WebSocketLike): boolean => {
    const command = id === undefined ? undefined : pending.get(id);
    if (command === undefined || command.moves >= MAX_SESSION_MOVES) return false;
    command.moves++;
    current.send(command.text);
    return true;
  };

  const settle = (id: string | undefined, error?: RemoteCommandError) => {
    const command = id === undefined ? undefined : pending.get(id);
    if (!command || id === undefined) return;
    pending.delete(id);
    if (error) command.reject(error);
    else command.resolve();
  };

  const failPending = (code: "connection_lost" | "closed", message: string) => {
    for (const [id, command] of pending) {
      // Commands never sent wait for the next connection; sent ones may or may not have run.
      if (!command.sent) continue;
      pending.delete(id);
      command.reject(new RemoteCommandError(code, message));
    }
  };

  const finish = () => {
    for (const [, command] of pending) command.reject(new RemoteCommandError("closed", "The client was closed."));
    pending.clear();
    rejectReady(new RemoteCommandError("closed", "The client was closed before it attached."));
    status.next("closed");
    status.complete();
    events.complete();
    frames.complete();
    state.complete();
  };

  const command = (body: ClientCommandBody): Promise<void> => {
    if (closed) return Promise.reject(new RemoteCommandError("closed", "The client is closed."));
    const id = `c${++nextId}`;
    const text = JSON.stringify({ ...body, id });
    return new Promise<void>((resolve, reject) => {
      const sendNow = socket !== undefined && socket.readyState === 1 && attachId === undefined && status.value === "open";
      pending.set(id, { text, sent: sendNow, moves: 0, resolve, reject });
      if (sendNow) socket?.send(text);
    });
  };

  open();

  return {
    events$: events.asObservable(),
    frames$: frames.asObservable(),
    state$: state.asObservable(),
    status$: status.asObservable(),
    get state() {
      return state.value;
    },
    get session() {
      return session;
    },
    get lastSeq() {
      return lastSeq ?? 0;
    },
    ready,
    prompt: (input) => command({ type: "prompt", input }),
    steer: (input) => command({ type: "steer", input }),
    followUp: (input) => command({ type: "follow_up", input }),
    abort: (abortOptions = {}) => command({ type: "abort", ...abortOptions }),
    cancelTool: (toolCallId, reason) => command(reason === undefined ? { type: "cancel_tool", toolCallId } : { type: "cancel_tool", toolCallId, reason }),
    approve: (toolCallId) => command({ type: "approve", toolCallId }),
    deny: (toolCallId, reason) => command(reason === undefined ? { type: "deny", toolCallId } : { type: "deny", toolCallId, reason }),
    continue: () => command({ type: "continue" }),
    reset: () => command({ type: "reset" }),
    close() {
      if (closed && status.value === "closed") return;
      closed = true;
      retryTimer?.unsubscribe();
      if (socket) socket.close(1000, "Client closed");
      else finish();
    },
  };
}
