// A dependency-free browser client for the rxagent WebSocket protocol (src/protocol/PROTOCOL.md).
// The typed, tested library client is src/client/client.ts; this one exists so the page
// needs no bundler. It keeps the session's state from snapshots and events, resumes from the
// last sequence number after a lost connection, and answers each command with a Promise.
import { MessageDeltaDecoder } from "/message-delta.js";

/** Why the server closed a socket (PROTOCOL.md, "Close codes"), in words for the page. */
const CLOSE_REASONS = {
  1008: "The server closed the connection: too many commands or unread replies.",
  4000: "Disconnected after a while without activity; sending a message reconnects.",
  4401: "The server refused this page: it needs a token. Open the address the server printed (with #token=…).",
  4403: "The server refused this page's origin. Open the page at the address the server printed, or start it with --allow-origin.",
};
/** Close codes after which reconnecting would get the same answer. */
const FINAL_CLOSES = new Set([4401, 4403]);

/** The state after one event; the same rules as src/streams/agent-state.ts. */
export function reduceState(state, event) {
  switch (event.type) {
    case "agent_start":
      return { ...state, isStreaming: true, pendingToolCalls: [], waitingToolCalls: [], pendingApprovals: [], streamingMessage: undefined, errorMessage: undefined };
    case "message_start":
    case "message_update":
      return event.message.role === "assistant" ? { ...state, streamingMessage: event.message } : state;
    case "message_end": {
      const next = { ...state, messages: [...state.messages, event.message] };
      if (event.message.role === "assistant") {
        next.streamingMessage = undefined;
        if (event.message.stopReason === "error" || event.message.stopReason === "aborted") {
          next.errorMessage = event.message.errorMessage ?? event.message.stopReason;
        }
      }
      return next;
    }
    case "tool_execution_start":
      return { ...state, pendingToolCalls: [...state.pendingToolCalls, event.toolCallId] };
    case "tool_execution_update": {
      // A sub-agent's call waiting for approval waits in this agent's list too (src/agent/nested-approvals.ts).
      const nested = innermostEvent(event);
      if (nested.type === "tool_approval_start") {
        const { toolCallId, toolName, args, since } = nested;
        return { ...state, pendingApprovals: [...(state.pendingApprovals ?? []), { toolCallId, toolName, args, since, parentToolCallId: event.toolCallId }] };
      }
      if (nested.type === "tool_approval_end") return { ...state, pendingApprovals: (state.pendingApprovals ?? []).filter((pending) => pending.toolCallId !== nested.toolCallId) };
      return state;
    }
    case "tool_execution_end":
      return {
        ...state,
        pendingToolCalls: state.pendingToolCalls.filter((id) => id !== event.toolCallId),
        waitingToolCalls: (state.waitingToolCalls ?? []).filter((id) => id !== event.toolCallId),
        pendingApprovals: (state.pendingApprovals ?? []).filter((pending) => pending.parentToolCallId !== event.toolCallId),
      };
    case "tool_slot_wait_start":
      return {
        ...state,
        pendingToolCalls: state.pendingToolCalls.filter((id) => id !== event.toolCallId),
        waitingToolCalls: [...(state.waitingToolCalls ?? []), event.toolCallId],
      };
    case "tool_slot_wait_end":
      return {
        ...state,
        pendingToolCalls: [...state.pendingToolCalls, event.toolCallId],
        waitingToolCalls: (state.waitingToolCalls ?? []).filter((id) => id !== event.toolCallId),
      };
    case "tool_approval_start":
      return {
        ...state,
        pendingToolCalls: state.pendingToolCalls.filter((id) => id !== event.toolCallId),
        pendingApprovals: [...(state.pendingApprovals ?? []), { toolCallId: event.toolCallId, toolName: event.toolName, args: event.args, since: event.since }],
      };
    case "tool_approval_end":
      return {
        ...state,
        pendingToolCalls: event.approved ? [...state.pendingToolCalls, event.toolCallId] : state.pendingToolCalls,
        pendingApprovals: (state.pendingApprovals ?? []).filter((pending) => pending.toolCallId !== event.toolCallId),
      };
    case "agent_end":
      return { ...state, isStreaming: false, pendingToolCalls: [], waitingToolCalls: [], pendingApprovals: [], streamingMessage: undefined };
    default:
      return state;
  }
}

/** The sub-agent event (`agentTool`) a `tool_execution_update` carries, or undefined. */
export function subAgentUpdateOf(event) {
  const details = event.type === "tool_execution_update" ? event.partialResult?.details : undefined;
  return details?.type === "sub_agent_event" && typeof details.event === "object" && details.event !== null ? details : undefined;
}

/** The event at the bottom of a chain of sub-agent updates. */
export function innermostEvent(event) {
  let current = event;
  for (let update = subAgentUpdateOf(current); update; update = subAgentUpdateOf(current)) current = update.event;
  return current;
}

/** A sub-agent's step as one line of its call's card (its tool calls and replies), or undefined. */
function subAgentStep(update) {
  const deeper = subAgentUpdateOf(update.event);
  if (deeper) return subAgentStep(deeper);
  const { event, agent, depth } = update;
  if (event.type === "tool_execution_start") return { depth, agent, kind: "tool", text: `⚙ ${event.toolName} ${JSON.stringify(event.args)}` };
  if (event.type === "tool_execution_end") return { depth, agent, kind: event.isError ? "error" : "done", text: `${event.isError ? "✗" : "✓"} ${textOf(event.result?.content).slice(0, 200)}` };
  if (event.type === "message_end" && event.message.role === "assistant") {
    const text = textOf(event.message.content.filter((block) => block.type === "text")).trim();
    return text === "" ? undefined : { depth, agent, kind: "reply", text: text.slice(0, 400) };
  }
  return undefined;
}

/** The text of a message's content (a string or blocks; other parts as [type]). */
export function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("");
  return JSON.stringify(content) ?? "";
}

export class AgentConnection {
  /**
   * @param {string} url  ws:// or wss:// URL of the endpoint
   * @param {{ session?: string, token?: string, onChange?: (connection: AgentConnection, event?: object) => void }} options
   */
  constructor(url, options = {}) {
    this.url = options.token === undefined ? url : `${url}${url.includes("?") ? "&" : "?"}token=${encodeURIComponent(options.token)}`;
    this.session = options.session;
    this.onChange = options.onChange ?? (() => {});
    this.status = "connecting";
    this.state = { messages: [], isStreaming: false, pendingToolCalls: [], waitingToolCalls: [], pendingApprovals: [] };
    /** Progress and results of tool calls seen live, by tool call id. */
    this.toolRuns = new Map();
    this.lastError = undefined;
    this.lastSeq = undefined;
    this.epoch = undefined;
    this.decoder = new MessageDeltaDecoder();
    this.fragments = [];
    /** Steering and follow-ups sent from this page and not yet in the transcript: { kind, text }. */
    this.queued = [];
    /** How each injected message came in ("steer" or "follow_up"), by message object. */
    this.injected = new WeakMap();
    this.pending = new Map();
    this.nextId = 0;
    this.attempts = 0;
    this.closed = false;
    this.open();
  }

  prompt(input) { return this.command({ type: "prompt", input }); }
  steer(input) { return this.queue("steer", input); }
  followUp(input) { return this.queue("follow_up", input); }
  abort() { return this.command({ type: "abort" }); }
  approve(toolCallId) { return this.command({ type: "approve", toolCallId }); }
  deny(toolCallId, reason) { return this.command(reason === undefined ? { type: "deny", toolCallId } : { type: "deny", toolCallId, reason }); }
  cancelTool(toolCallId, reason) { return this.command(reason === undefined ? { type: "cancel_tool", toolCallId } : { type: "cancel_tool", toolCallId, reason }); }
  reset() { return this.command({ type: "reset" }); }

  close() {
    this.closed = true;
    this.socket?.close(1000, "Page closed");
  }

  /** Sends a steering or follow-up message and shows it as queued until the agent takes it in. */
  queue(kind, input) {
    const entry = { kind, text: typeof input === "string" ? input : input.text };
    this.queued.push(entry);
    this.onChange(this);
    return this.command({ type: kind, input }).catch((error) => {
      this.queued = this.queued.filter((candidate) => candidate !== entry);
      this.onChange(this);
      throw error;
    });
  }

  open() {
    // "rxagent.3": this page reads protocol 3 (message-delta.js), so the server need not rewrite it into 2.
    const socket = new WebSocket(this.url, ["rxagent.3"]);
    this.socket = socket;
    this.fragments = [];
    socket.addEventListener("open", () => this.attach());
    socket.addEventListener("message", (message) => {
      if (typeof message.data !== "string") return;
      const frame = JSON.parse(message.data);
      if (frame.type !== "fragment") return this.receive(frame);
      this.fragments.push(frame.data);
      if (frame.final) this.receive(JSON.parse(this.fragments.splice(0).join("")));
    });
    socket.addEventListener("close", (close) => {
      if (this.socket !== socket) return;
      this.attachId = undefined;
      const reason = CLOSE_REASONS[close.code];
      if (reason) this.lastError = { code: close.code, message: close.reason ? `${reason} (${close.reason})` : reason };
      for (const [id, command] of this.pending) {
        if (command.sent) {
          this.pending.delete(id);
          command.reject(new Error("The connection closed before the server answered."));
        }
      }
      if (FINAL_CLOSES.has(close.code)) this.closed = true;
      if (this.closed) return this.setStatus(FINAL_CLOSES.has(close.code) ? "refused" : "closed");
      // Closed for idling: reconnect when the user acts, not behind their back.
      if (close.code === 4000) return this.setStatus("paused");
      this.setStatus("reconnecting");
      const delay = Math.min(10_000, 250 * 2 ** this.attempts++);
      setTimeout(() => this.open(), delay);
    });
  }

  attach() {
    this.attachId = `attach-${++this.nextId}`;
    const frame = { type: "attach", id: this.attachId };
    if (this.session !== undefined) frame.session = this.session;
    if (this.lastSeq !== undefined) frame.lastSeq = this.lastSeq;
    if (this.lastSeq !== undefined && this.epoch !== undefined) frame.epoch = this.epoch;
    this.socket.send(JSON.stringify(frame));
  }

  command(body) {
    const id = `c${++this.nextId}`;
    const text = JSON.stringify({ ...body, id });
    if (this.closed) return Promise.reject(new Error(this.lastError?.message ?? "The connection is closed."));
    if (this.status === "paused") this.open();
    return new Promise((resolve, reject) => {
      const sendNow = this.status === "open" && this.attachId === undefined;
      this.pending.set(id, { text, sent: sendNow, moves: 0, resolve, reject });
      if (sendNow) this.socket.send(text);
    });
  }

  receive(frame) {
    if (frame.type === "ack") {
      if (frame.id === this.attachId) {
        this.attachId = undefined;
        this.attempts = 0;
        this.session = frame.session;
        this.epoch = frame.epoch ?? this.epoch;
        if (typeof this.lastError?.code === "number") this.lastError = undefined;
        this.setStatus("open");
        for (const command of this.pending.values()) {
          if (!command.sent) {
            command.sent = true;
            this.socket.send(command.text);
          }
        }
      }
      this.settle(frame.id);
    } else if (frame.type === "error") {
      // Not taken (a session on Redis changed hands first): sent again, as connectAgent does.
      if (frame.code === "session_moved" && this.sendAgain(frame.id)) return;
      this.lastError = frame;
      if (frame.id !== undefined && frame.id === this.attachId) {
        // The session is gone or refused (as in client.ts): reconnecting would get the same answer.
        this.attachId = undefined;
        this.closed = true;
        for (const id of [...this.pending.keys()]) this.settle(id, new Error(frame.message));
        this.socket.close(1000, "Attach refused");
      }
      this.settle(frame.id, new Error(frame.message));
      this.onChange(this);
    } else if (frame.type === "snapshot") {
      this.lastSeq = frame.seq;
      this.epoch = frame.epoch;
      this.state = frame.state;
      this.decoder.reset(frame.state.streamingMessage, frame.argumentTexts);
      // The snapshot's transcript holds the results; live runs of before may reuse ids after a reset.
      this.toolRuns.clear();
      this.onChange(this);
    } else if (frame.type === "event" || frame.type === "update" || frame.type === "end") {
      if (this.attachId !== undefined) return;
      const first = frame.first ?? frame.seq;
      if (this.lastSeq !== undefined && frame.seq <= this.lastSeq) return;
      if (this.lastSeq !== undefined && first !== this.lastSeq + 1) return this.attach();
      this.lastSeq = frame.seq;
      // An `end` frame (protocol 3) is the streamed message's message_end, as a patch to the message held.
      const event = frame.type === "update" ? this.decoder.decode(frame) : frame.type === "end" ? this.decoder.end(frame) : frame.event;
      if (frame.type === "event") this.decoder.observe(event);
      this.trackTool(event);
      this.trackQueued(event);
      this.state = reduceState(this.state, event);
      this.onChange(this, event);
    }
  }

  /** A queued message is taken in when its user message ends mid-run; what a run leaves unsent is no longer queued. */
  trackQueued(event) {
    if (event.type === "message_end" && event.message.role === "user" && this.state.isStreaming) {
      const text = textOf(event.message.content);
      const index = this.queued.findIndex((entry) => entry.text === text);
      if (index >= 0) {
        this.injected.set(event.message, this.queued[index].kind);
        this.queued.splice(index, 1);
      }
    }
    if (event.type === "agent_end") {
      const left = [...(event.queued?.steering ?? []), ...(event.queued?.followUp ?? [])].map((message) => textOf(message.content));
      this.queued = this.queued.filter((entry) => left.includes(entry.text));
    }
  }

  trackTool(event) {
    // A new run's calls may reuse an earlier run's ids (after a reset); earlier results are in the transcript.
    if (event.type === "agent_start") this.toolRuns.clear();
    if (!event.type.startsWith("tool_execution")) return;
    const run = this.toolRuns.get(event.toolCallId) ?? { name: event.toolName, args: event.args };
    const nested = subAgentUpdateOf(event);
    if (nested) {
      const step = subAgentStep(nested);
      if (step) run.steps = [...(run.steps ?? []), step];
    } else if (event.type === "tool_execution_update") run.progress = event.partialResult;
    if (event.type === "tool_execution_end") Object.assign(run, { result: event.result, isError: event.isError, done: true });
    this.toolRuns.set(event.toolCallId, run);
  }

  sendAgain(id) {
    const command = this.pending.get(id);
    if (!command || command.moves >= 3) return false;
    command.moves++;
    this.socket.send(command.text);
    return true;
  }

  settle(id, error) {
    const command = this.pending.get(id);
    if (!command) return;
    this.pending.delete(id);
    if (error) command.reject(error);
    else command.resolve();
  }

  setStatus(status) {
    this.status = status;
    this.onChange(this);
  }
}
