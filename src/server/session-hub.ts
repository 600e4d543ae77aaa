import type { Subscription } from "rxjs";
import { errorText, InvalidStateError } from "../errors.js";
import type { Agent } from "../streams/agent.js";
import type { AgentEvent } from "../types.js";
import type { ClientConnection, ClientStats } from "./client-connection.js";
import type { ClientCommand, ErrorCode, ServerFrame, SnapshotFrame } from "../protocol/protocol-schemas.js";

/** How much of a session's history is kept for clients that reconnect. */
export interface EventLogOptions {
  /** Events kept for resume; a client further behind gets a snapshot. Default 2000. */
  maxEvents?: number;
  /** Same, in bytes of event JSON. Default 8 MiB. */
  maxBytes?: number;
}

interface LoggedEvent {
  seq: number;
  type: AgentEvent["type"];
  json: string;
}

/**
 * One session: an `Agent`, the sequence numbers of its events, a bounded log of recent events
 * for resume, and the clients attached to it, who all get the same frames.
 */
export class SessionHub {
  private seq = 0;
  private readonly log: LoggedEvent[] = [];
  private logBytes = 0;
  private readonly clients = new Set<ClientConnection>();
  private readonly subscription: Subscription;
  private readonly maxEvents: number;
  private readonly maxBytes: number;

  constructor(
    readonly id: string,
    readonly agent: Agent,
    options: EventLogOptions = {},
  ) {
    this.maxEvents = options.maxEvents ?? 2000;
    this.maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
    this.subscription = agent.events$.subscribe((event) => this.publish(event));
  }

  /** The sequence number of the latest event (0 before the first). */
  get lastSeq(): number {
    return this.seq;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  clientStats(): ClientStats[] {
    return [...this.clients].map((client) => ({ ...client.stats }));
  }

  /** The state after `lastSeq`. Read between events, so state and number always agree. */
  snapshot(): SnapshotFrame {
    return { type: "snapshot", session: this.id, seq: this.seq, state: this.agent.state };
  }

  /** How a client that last saw `lastSeq` catches up: the log still holds what it missed, or not. */
  resumeMode(lastSeq: number | undefined): "replay" | "snapshot" {
    if (lastSeq === undefined || lastSeq > this.seq) return "snapshot";
    if (lastSeq === this.seq) return "replay";
    const oldest = this.log[0];
    return oldest !== undefined && oldest.seq <= lastSeq + 1 ? "replay" : "snapshot";
  }

  /** Adds a client and sends it the backlog the way `resumeMode` said. */
  attach(client: ClientConnection, lastSeq: number | undefined): void {
    if (this.resumeMode(lastSeq) === "snapshot" || lastSeq === undefined) {
      client.sendFrame(this.snapshot());
    } else {
      for (const logged of this.log) {
        if (logged.seq > lastSeq) client.sendEvent(logged.seq, logged.type, logged.json);
      }
    }
    this.clients.add(client);
  }

  detach(client: ClientConnection): void {
    this.clients.delete(client);
  }

  /** Runs one command for `client`; the ack or error goes to that client only. */
  execute(command: Exclude<ClientCommand, { type: "attach" }>, client: ClientConnection): void {
    const ack: ServerFrame = { type: "ack", id: command.id };
    try {
      switch (command.type) {
        case "prompt":
        case "continue":
          if (this.agent.isRunning) {
            client.sendFrame(errorFrame(command.id, "busy", `Cannot ${command.type} while the agent is running: send "steer" to redirect it now or "follow_up" to queue a message for when it finishes.`));
            return;
          }
          // The run may emit events synchronously; the ack must still come first.
          client.hold();
          try {
            if (command.type === "prompt") this.agent.prompt(command.input);
            else this.agent.continue();
            client.release(ack);
          } catch (error) {
            client.release(commandError(command.id, error));
          }
          return;
        case "steer":
          this.agent.steer(command.input);
          break;
        case "follow_up":
          this.agent.followUp(command.input);
          break;
        case "abort":
          this.agent.abort(command.clearFollowUps ? { clearFollowUps: true } : {});
          break;
        case "reset":
          this.agent.reset();
          // A reset changes the state without events, and old events no longer describe it.
          this.log.length = 0;
          this.logBytes = 0;
          client.sendFrame(ack);
          for (const other of this.clients) other.sendFrame(this.snapshot());
          return;
      }
      client.sendFrame(ack);
    } catch (error) {
      client.sendFrame(commandError(command.id, error));
    }
  }

  /** Aborts the active run and resolves once it has ended (or after `timeoutMs`). */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.agent.isRunning) return;
    this.agent.abort();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.agent.waitForIdle(), timeout]);
    clearTimeout(timer);
  }

  /** Stops listening to the agent. The agent itself is left alone: its owner decides its fate. */
  close(): void {
    this.subscription.unsubscribe();
    this.clients.clear();
  }

  private publish(event: AgentEvent): void {
    const seq = ++this.seq;
    // Serialized once here and shared by every client and the log.
    const json = JSON.stringify(event);
    this.log.push({ seq, type: event.type, json });
    this.logBytes += json.length;
    while (this.log.length > this.maxEvents || (this.logBytes > this.maxBytes && this.log.length > 1)) {
      this.logBytes -= (this.log.shift() as LoggedEvent).json.length;
    }
    for (const client of this.clients) client.sendEvent(seq, event.type, json);
  }
}

export function errorFrame(id: string | undefined, code: ErrorCode, message: string): ServerFrame {
  return id === undefined ? { type: "error", code, message } : { type: "error", id, code, message };
}

function commandError(id: string, error: unknown): ServerFrame {
  return errorFrame(id, error instanceof InvalidStateError ? "invalid_state" : "internal", errorText(error));
}
