// A dependency-free browser client for the rxagent WebSocket protocol (src/protocol/PROTOCOL.md).
// The typed, tested library client is src/client/client.ts; this one exists so the page
// needs no bundler. It keeps the session's state from snapshots and events, resumes from the
// last sequence number after a lost connection, and answers each command with a Promise.

/** The state after one event; the same rules as src/streams/agent-state.ts. */
export function reduceState(state, event) {
  switch (event.type) {
    case "agent_start":
      return { ...state, isStreaming: true, pendingToolCalls: [], streamingMessage: undefined, errorMessage: undefined };
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
    case "tool_execution_end":
      return { ...state, pendingToolCalls: state.pendingToolCalls.filter((id) => id !== event.toolCallId) };
    case "agent_end":
      return { ...state, isStreaming: false, pendingToolCalls: [], streamingMessage: undefined };
    default:
      return state;
  }
}

export class AgentConnection {
  /**
   * @param {string} url  ws:// or wss:// URL of the endpoint
   * @param {{ session?: string, onChange?: (connection: AgentConnection, event?: object) => void }} options
   */
  constructor(url, options = {}) {
    this.url = url;
    this.session = options.session;
    this.onChange = options.onChange ?? (() => {});
    this.status = "connecting";
    this.state = { messages: [], isStreaming: false, pendingToolCalls: [] };
    /** Progress and results of tool calls seen live, by tool call id. */
    this.toolRuns = new Map();
    this.lastError = undefined;
    this.lastSeq = undefined;
    this.pending = new Map();
    this.nextId = 0;
    this.attempts = 0;
    this.closed = false;
    this.open();
  }

  prompt(input) { return this.command({ type: "prompt", input }); }
  steer(input) { return this.command({ type: "steer", input }); }
  followUp(input) { return this.command({ type: "follow_up", input }); }
  abort() { return this.command({ type: "abort" }); }
  reset() { return this.command({ type: "reset" }); }

  close() {
    this.closed = true;
    this.socket?.close(1000, "Page closed");
  }

  open() {
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.addEventListener("open", () => this.attach());
    socket.addEventListener("message", (message) => this.receive(JSON.parse(message.data)));
    socket.addEventListener("close", () => {
      if (this.socket !== socket) return;
      this.attachId = undefined;
      for (const [id, command] of this.pending) {
        if (command.sent) {
          this.pending.delete(id);
          command.reject(new Error("The connection closed before the server answered."));
        }
      }
      if (this.closed) return this.setStatus("closed");
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
    this.socket.send(JSON.stringify(frame));
  }

  command(body) {
    const id = `c${++this.nextId}`;
    const text = JSON.stringify({ ...body, id });
    return new Promise((resolve, reject) => {
      const sendNow = this.status === "open" && this.attachId === undefined;
      this.pending.set(id, { text, sent: sendNow, resolve, reject });
      if (sendNow) this.socket.send(text);
    });
  }

  receive(frame) {
    if (frame.type === "ack") {
      if (frame.id === this.attachId) {
        this.attachId = undefined;
        this.attempts = 0;
        this.session = frame.session;
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
      this.state = frame.state;
      // The snapshot's transcript holds the results; live runs of before may reuse ids after a reset.
      this.toolRuns.clear();
      this.onChange(this);
    } else if (frame.type === "event") {
      if (this.attachId !== undefined) return;
      const first = frame.first ?? frame.seq;
      if (this.lastSeq !== undefined && frame.seq <= this.lastSeq) return;
      if (this.lastSeq !== undefined && first !== this.lastSeq + 1) return this.attach();
      this.lastSeq = frame.seq;
      this.trackTool(frame.event);
      this.state = reduceState(this.state, frame.event);
      this.onChange(this, frame.event);
    }
  }

  trackTool(event) {
    // A new run's calls may reuse an earlier run's ids (after a reset); earlier results are in the transcript.
    if (event.type === "agent_start") this.toolRuns.clear();
    if (!event.type.startsWith("tool_execution")) return;
    const run = this.toolRuns.get(event.toolCallId) ?? { name: event.toolName, args: event.args };
    if (event.type === "tool_execution_update") run.progress = event.partialResult;
    if (event.type === "tool_execution_end") Object.assign(run, { result: event.result, isError: event.isError, done: true });
    this.toolRuns.set(event.toolCallId, run);
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
