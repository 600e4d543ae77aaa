import type { ClientStats } from "../server/backpressure.js";
import type { ClientConnection, ReplaySource } from "../server/client-connection.js";
import type { MergeableUpdate } from "../server/mergeable-update.js";
import { type LoggedFrame, MemoryEventLog } from "../server/event-log.js";
import type { ArgumentText, EndFrame, SnapshotFrame, UpdateFrame } from "../protocol/protocol-schemas.js";
import { MessageDeltaDecoder } from "../protocol/message-delta-decoder.js";
import { initialAgentState, reduceAgentState } from "../agent/agent-state.js";
import { withState } from "../agent/shared-ids.js";
import type { AgentEvent, AgentMessage, AgentState } from "../types.js";

type AgentEndEvent = Extract<AgentEvent, { type: "agent_end" }>;

/**
 * One process's copy of a session shared through Redis: the recent frames (for resume), the
 * state they lead to (for snapshots), and the clients attached here. Fed in order by the runner
 * of this process or by the frames other processes publish; a frame it already has is ignored.
 */
export class SessionMirror {
  private readonly log: MemoryEventLog;
  private readonly decoder = new MessageDeltaDecoder();
  private readonly clients = new Set<ClientConnection>();
  private state: AgentState;
  private seq: number;
  /** The latest run's end: its event when applied here, its frame's JSON when kept from the stream (parsed if a snapshot needs it). */
  private lastAgentEnd: { seq: number; event?: AgentEndEvent; json?: string } | undefined;
  /** The `queueVersion` of the queue counts the state shows: older notices are ignored. */
  private queueVersion = 0;
  /**
   * Set by this process's runner while it runs the session: the argument texts its encoder holds
   * (protocol 3). Why not the decoder's: the runner's own frames reach the mirror as events,
   * which say what the arguments parse to but not their text.
   */
  ownArgumentTexts: (() => ArgumentText[]) | undefined;
  readonly replaySource: ReplaySource;

  constructor(
    readonly id: string,
    epoch: string,
    lastSeq: number,
    messages: readonly AgentMessage[],
    maxEvents: number,
  ) {
    this.log = new MemoryEventLog(epoch, { maxEvents });
    this.log.reset(lastSeq, epoch);
    this.seq = lastSeq;
    this.state = initialAgentState(messages);
    const mirror = this;
    this.replaySource = {
      read: (seq) => mirror.log.read(seq),
      get lastSeq() {
        return mirror.seq;
      },
    };
  }

  get lastSeq(): number {
    return this.seq;
  }

  get epoch(): string {
    return this.log.epoch;
  }

  /** True while the frames say a run lives (it began and has not ended). */
  get isRunning(): boolean {
    return this.state.isStreaming;
  }

  /** True when the last frame is a run's end: the run may still have been left to continue (see `RedisSession`). */
  get endsWithRunEnd(): boolean {
    return this.lastAgentEnd !== undefined && this.lastAgentEnd.seq === this.seq;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  get messages(): readonly AgentMessage[] {
    return this.state.messages;
  }

  clientStats(): ClientStats[] {
    return [...this.clients].map((client) => ({ ...client.stats }));
  }

  snapshot(): SnapshotFrame {
    const snapshot: SnapshotFrame = { type: "snapshot", session: this.id, seq: this.seq, epoch: this.log.epoch, state: this.state };
    const end = this.lastAgentEnd;
    if (end !== undefined) {
      end.event ??= (JSON.parse(end.json ?? "") as { event: AgentEndEvent }).event;
      snapshot.lastAgentEnd = { seq: end.seq, event: end.event };
    }
    const argumentTexts = this.ownArgumentTexts?.() ?? this.decoder.argumentTexts();
    if (argumentTexts.length > 0) snapshot.argumentTexts = argumentTexts;
    return snapshot;
  }

  /** Same rules as `SessionHub.resumeMode`. */
  resumeMode(lastSeq: number | undefined, epoch?: string): "replay" | "snapshot" {
    if (lastSeq === undefined || lastSeq > this.seq) return "snapshot";
    if (epoch !== undefined && epoch !== this.log.epoch) return "snapshot";
    if (lastSeq < this.log.oldestSeq) return "snapshot";
    return lastSeq === this.seq || this.log.read(lastSeq + 1) !== undefined ? "replay" : "snapshot";
  }

  attach(client: ClientConnection, lastSeq: number | undefined, epoch?: string): void {
    if (lastSeq === undefined || this.resumeMode(lastSeq, epoch) === "snapshot") client.sendFrame(this.snapshot());
    else client.startReplay(this.replaySource, lastSeq);
    this.clients.add(client);
  }

  detach(client: ClientConnection): void {
    this.clients.delete(client);
  }

  /** A frame the runner of this process made: its event is known, nothing to parse. */
  applyOwn(frame: LoggedFrame, event: AgentEvent, mergeable: MergeableUpdate | undefined): void {
    this.decoder.observe(event);
    this.apply(frame, event, mergeable);
  }

  /** A frame read from Redis (its stream or its channel), as JSON. Returns false when it is not the next one. */
  applyJson(seq: number, json: string): boolean {
    if (seq <= this.seq) return true;
    if (seq !== this.seq + 1) return false;
    const frame = JSON.parse(json) as { type: "event"; event: AgentEvent } | UpdateFrame | EndFrame;
    let event: AgentEvent;
    if (frame.type === "update") {
      event = this.decoder.decode(frame);
    } else if (frame.type === "end") {
      // Protocol 3: the streamed message's end, a patch to the message the decoder holds.
      event = this.decoder.end(frame);
    } else {
      event = frame.event;
      this.decoder.observe(event);
    }
    this.apply({ seq, type: event.type, json }, event, undefined);
    return true;
  }

  /**
   * The session's queue counts on Redis, as of `version` (the meta's `queueVersion`): the state and
   * snapshots show them (`queuedSteering`, `queuedFollowUp`). Why from Redis and not from the
   * events: no event tells a queue change, and only the runner's agent knows its queues; a
   * snapshot on any process now shows what the session's queue holds. A notice read while the
   * session was being read may be older than the read: the version tells.
   */
  queued(version: number, queuedSteering: number, queuedFollowUp: number): void {
    if (version <= this.queueVersion) return;
    this.queueVersion = version;
    this.state = withState(this.state, { queuedSteering, queuedFollowUp });
  }

  /** Frames of a run that began before this mirror: they rebuild the state, and are kept for resume. */
  replayRun(frames: readonly { seq: number; json: string }[]): void {
    for (const { seq, json } of frames) this.applyJson(seq, json);
  }

  /** Frames from before the live run: kept for resume; the transcript already holds what they did. */
  keep(frames: readonly { seq: number; type: AgentEvent["type"]; json: string }[]): void {
    for (const frame of frames) {
      // The stream may have been trimmed: the log then starts at its first frame.
      if (frame.seq <= this.seq) continue;
      this.seq = frame.seq;
      if (frame.type === "agent_end") this.lastAgentEnd = { seq: frame.seq, json: frame.json };
      this.log.append(frame);
    }
  }

  /** Frames up to `seq` are gone from Redis: the log starts after it, in the same epoch (older resumes get a snapshot). */
  skipTo(seq: number): void {
    this.seq = seq;
    this.log.reset(seq, this.log.epoch);
  }

  /** A reset: a new epoch after `seq`, an empty transcript; every client gets a snapshot. */
  reset(seq: number, epoch: string): void {
    this.seq = seq;
    this.lastAgentEnd = undefined;
    this.log.reset(seq, epoch);
    this.decoder.reset(undefined);
    this.state = initialAgentState([]);
    for (const client of this.clients) {
      client.dropEvents();
      client.sendFrame(this.snapshot());
    }
  }

  /** Moves every client to `next`, each starting there from a snapshot. */
  handOver(next: SessionMirror): void {
    for (const client of this.clients) {
      client.dropEvents();
      next.attach(client, undefined);
    }
    this.clients.clear();
  }

  close(): void {
    this.clients.clear();
  }

  private apply(frame: LoggedFrame, event: AgentEvent, mergeable: MergeableUpdate | undefined): void {
    this.seq = frame.seq;
    this.state = reduceAgentState(this.state, event);
    if (event.type === "agent_end") {
      this.decoder.reset(undefined);
      this.lastAgentEnd = { seq: frame.seq, event };
    }
    this.log.append(frame);
    for (const client of this.clients) client.sendEvent(frame, mergeable);
  }
}
