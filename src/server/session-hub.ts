import { randomUUID } from "node:crypto";
import type { Subscription } from "rxjs";
import type { Agent } from "../agent/agent.js";
import type { AgentEvent } from "../types.js";
import type { ClientStats } from "./backpressure.js";
import type { ClientConnection, ReplaySource } from "./client-connection.js";
import { type MergeableUpdate, mergeableUpdate } from "./mergeable-update.js";
import type { CommandReplies, HostedSession } from "./hosted-session.js";
import type { ClientCommand, ProtocolVersion, SnapshotFrame } from "../protocol/protocol-schemas.js";
import { PROTOCOL_VERSION } from "../protocol/protocol-version.js";
import { executeCommand } from "./execute-command.js";

export { errorFrame } from "./execute-command.js";
import { MessageDeltaEncoder, type UpdateFrame, type WireModelEvent } from "../protocol/message-delta.js";
import { errorText } from "../errors.js";
import type { LoggedFrame } from "./event-log.js";
import { MergedUpdateFrame, RebuiltUpdateFrame, sessionFrameOf } from "./rebuilt-update-frame.js";
import { type EventLog, type EventLogOptions, MemoryEventLog } from "./event-log.js";

export type { EventLogOptions } from "./event-log.js";

/**
 * One session: an `Agent`, the sequence numbers of its events, a bounded log of recent frames
 * for resume, and the clients attached to it, who all get the same frames.
 */
export class SessionHub implements HostedSession {
  private seq = 0;
  private lastAgentEnd: SnapshotFrame["lastAgentEnd"];
  private readonly log: EventLog;
  private readonly encoder: MessageDeltaEncoder;
  /** The update frames of the message streaming now: the first's and last's numbers, and the last's event. */
  private updates: { first: number; last: number; event: WireModelEvent } | undefined;
  private readonly clients = new Set<ClientConnection>();
  private readonly subscription: Subscription;
  private readonly replaySource: ReplaySource;

  constructor(
    readonly id: string,
    readonly agent: Agent,
    options: EventLogOptions = {},
    log?: EventLog,
    /** The protocol its frames are written in. */
    readonly protocol: ProtocolVersion = PROTOCOL_VERSION,
  ) {
    this.encoder = new MessageDeltaEncoder({ argumentsFromText: protocol >= 3 });
    this.log = log ?? new MemoryEventLog(randomUUID(), options);
    const hub = this;
    this.replaySource = {
      read: (seq) => hub.log.read(seq),
      get lastSeq() {
        return hub.seq;
      },
    };
    this.subscription = agent.events$.subscribe((event) => this.publish(event));
  }

  /** The sequence number of the latest event (0 before the first). */
  get lastSeq(): number {
    return this.seq;
  }

  get isRunning(): boolean {
    return this.agent.isRunning;
  }

  /** Changes on `reset`; a client that resumes from another epoch gets a snapshot. */
  get epoch(): string {
    return this.log.epoch;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  clientStats(): ClientStats[] {
    return [...this.clients].map((client) => ({ ...client.stats }));
  }

  /** The state after `lastSeq`. Read between events, so state and number always agree. */
  snapshot(): SnapshotFrame {
    const snapshot: SnapshotFrame = { type: "snapshot", session: this.id, seq: this.seq, epoch: this.log.epoch, state: this.agent.state };
    if (this.lastAgentEnd !== undefined) snapshot.lastAgentEnd = this.lastAgentEnd;
    const argumentTexts = this.encoder.argumentTexts();
    if (argumentTexts.length > 0) snapshot.argumentTexts = argumentTexts;
    return snapshot;
  }

  /** How a client that last saw `lastSeq` (in `epoch`) catches up: the log still holds what it missed, or not. */
  resumeMode(lastSeq: number | undefined, epoch?: string): "replay" | "snapshot" {
    if (lastSeq === undefined || lastSeq > this.seq) return "snapshot";
    if (epoch !== undefined && epoch !== this.log.epoch) return "snapshot";
    if (lastSeq < this.log.oldestSeq) return "snapshot";
    return lastSeq === this.seq || this.log.read(lastSeq + 1) !== undefined ? "replay" : "snapshot";
  }

  /** Adds a client and sends it the backlog the way `resumeMode` said. */
  attach(client: ClientConnection, lastSeq: number | undefined, epoch?: string): void {
    if (lastSeq === undefined || this.resumeMode(lastSeq, epoch) === "snapshot") client.sendFrame(this.snapshot());
    else client.startReplay(this.replaySource, lastSeq);
    this.clients.add(client);
  }

  detach(client: ClientConnection): void {
    this.clients.delete(client);
  }

  /** Runs one command for `client`; the ack or error goes to that client only. */
  execute(command: Exclude<ClientCommand, { type: "attach" }>, client: CommandReplies): void {
    executeCommand(this.agent, command, client, () => {
      this.startEpoch();
      client.sendFrame({ type: "ack", id: command.id });
      for (const other of this.clients) {
        other.dropEvents();
        other.sendFrame(this.snapshot());
      }
    });
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

  /**
   * A reset changes the state without events, and old events no longer describe it: the reset
   * takes a sequence number of its own and a new epoch, so a resume from before it cannot
   * replay on top of the old transcript.
   */
  private startEpoch(): void {
    this.seq++;
    this.lastAgentEnd = undefined;
    this.log.reset(this.seq, randomUUID());
    this.encoder.clear();
    this.updates = undefined;
  }

  /** Notes an update frame of the streaming message, for `mergeUpdates`. */
  private noteUpdate(seq: number, update: Omit<UpdateFrame, "seq">): void {
    const updates = (this.updates ??= { first: seq, last: seq, event: update.event });
    updates.last = seq;
    updates.event = update.event;
  }

  /**
   * The streamed message ends: the log keeps its updates as one merged frame (`MergedUpdateFrame`,
   * the message as the encoder holds it before the end), from the first one it still holds.
   */
  private mergeUpdates(): void {
    const updates = this.updates;
    this.updates = undefined;
    const message = this.encoder.current;
    if (updates === undefined || message === undefined || this.log.merge === undefined) return;
    const first = Math.max(updates.first, this.log.oldestSeq + 1);
    const argumentTexts = this.encoder.argumentTexts();
    this.log.merge(first, updates.last, (jsonLength) => new MergedUpdateFrame(updates.last, first, updates.event, message, argumentTexts, jsonLength));
  }

  /**
   * Why every step catches: this runs inside the agent's `events$` subscriber, where a throw is
   * rethrown by rxjs on a timer and ends the process (issue 27). An event that cannot be encoded
   * drops every client of this session (they reconnect and get a snapshot); a client whose send
   * throws is dropped alone, and the others go on.
   */
  private publish(event: AgentEvent): void {
    const seq = ++this.seq;
    if (event.type === "agent_end") this.lastAgentEnd = { seq, event };
    let frame: LoggedFrame;
    let mergeable: MergeableUpdate | undefined;
    try {
      if (event.type === "message_end") this.mergeUpdates();
      // Serialized once here and shared by every client and the log.
      const { json, update } = sessionFrameOf(this.encoder, seq, event);
      frame = { seq, type: event.type, json };
      this.log.append(update && RebuiltUpdateFrame.suits(update) ? new RebuiltUpdateFrame(seq, update, json.length) : frame);
      if (update) this.noteUpdate(seq, update);
      mergeable = update ? mergeableUpdate(update.event, this.encoder) : undefined;
    } catch (error) {
      // The encoder may be halfway through a message: start afresh, as after a reset.
      this.startEpoch();
      for (const client of this.clients) client.drop(`The session's "${event.type}" event could not be sent: ${errorText(error)}`);
      this.clients.clear();
      return;
    }
    for (const client of this.clients) {
      try {
        client.sendEvent(frame, mergeable);
      } catch (error) {
        this.clients.delete(client);
        client.drop(`An event could not be sent to this client: ${errorText(error)}`);
      }
    }
  }
}
