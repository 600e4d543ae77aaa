import { errorText } from "../errors.js";
import type { ServerFrame } from "../protocol/protocol-schemas.js";
import type { LoggedFrame } from "./event-log.js";
import { FrameQueue } from "./frame-queue.js";
import { fragmentFrame } from "./fragment-frame.js";
import { ProtocolDowngrade } from "./protocol-downgrade.js";
import type { BackpressureOptions, ClientStats } from "./backpressure.js";
import type { MergeableUpdate } from "./mergeable-update.js";
import { type Corkable, CorkedWrites } from "./corked-writes.js";
import { repairedJson } from "../util/repaired-json.js";

/** The part of a `ws` WebSocket the send queue needs (a fake in tests is easy). */
export interface SendableSocket {
  /** Bytes handed to `send` but not yet written to the kernel. */
  readonly bufferedAmount: number;
  readonly readyState: number;
  send(data: string, callback: (error?: Error) => void): void;
}

/** Where a client that resumes reads what it missed: the session's log and its latest number. */
export interface ReplaySource {
  read(seq: number): LoggedFrame | undefined;
  readonly lastSeq: number;
}

interface QueuedFrame {
  /** Built when written, for merged updates: the merge itself then costs no serialization. */
  json: string | (() => string);
  size: number;
  kind: "event" | "snapshot" | "control";
  seq?: number;
  first?: number;
  /** Set on live updates: a later update may replace this frame. */
  mergeable?: boolean;
}

const OPEN = 1;

/**
 * The send side of one client. Every frame the client gets (events, snapshots, acks, errors,
 * `rate_limited`) goes through one bounded queue: written while the socket keeps up, queued
 * (consecutive updates merged) while it does not. Past the cap queued events are dropped and a
 * snapshot is owed; a client whose acks and errors alone pass the cap is closed
 * (`onOverBudget`). A resuming client reads the session's log as its socket drains, so a long
 * backlog never sits in memory twice. The agent and the other clients never wait for it.
 */
export class ClientConnection {
  readonly stats: ClientStats = {
    sentFrames: 0,
    sentBytes: 0,
    queuedFrames: 0,
    peakQueuedFrames: 0,
    queuedBytes: 0,
    peakQueuedBytes: 0,
    coalescedUpdates: 0,
    resyncs: 0,
    droppedFrames: 0,
    snapshotsSent: 0,
    bufferedAmount: 0,
  };
  private readonly queue = new FrameQueue<QueuedFrame>();
  private readonly highWaterMark: number;
  private readonly maxQueuedFrames: number;
  private readonly maxQueuedBytes: number;
  private readonly maxFrameBytes: number;
  /** Frames passed to `send` whose write callback has not fired. */
  private inFlight = 0;
  /** While set, frames wait here so that an ack can go out before the events its command caused. */
  private held: QueuedFrame[] | undefined;
  /** Set after an overflow: events are dropped until a snapshot has been sent. */
  private owesSnapshot = false;
  /** Set while the client reads its backlog from the log. */
  private replay: { source: ReplaySource; next: number } | undefined;
  /** Set once over budget: nothing more is queued or written. */
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  /** Set for a client that reads only protocol 2 (see `readsOnlyProtocol2`). */
  private downgrade: ProtocolDowngrade | undefined;
  /** Holds a turn's frames for one write, when the socket can be corked. */
  private readonly corked: CorkedWrites | undefined;
  /** A frame's write callback, one for every frame: a streamed reply writes thousands. */
  private readonly written = (): void => {
    this.inFlight--;
    this.flush();
  };

  constructor(
    private readonly socket: SendableSocket,
    /** Builds a snapshot frame of the session as it is now; called when one is owed and the socket has drained. */
    private readonly snapshotJson: () => string,
    options: BackpressureOptions = {},
    /** Called once when the client's acks and errors alone exceed the queue's cap. */
    private readonly onOverBudget: () => void = () => undefined,
    /** Called once when a frame for this client could not be made or sent (see `drop`). */
    private readonly onBroken: (reason: string) => void = () => undefined,
    /** The stream under `socket`, when it can hold writes (`corkableOf`). */
    corkable?: Corkable,
  ) {
    this.highWaterMark = options.highWaterMark ?? 64 * 1024;
    this.maxQueuedFrames = options.maxQueuedFrames ?? 512;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 8 * 1024 * 1024;
    this.maxFrameBytes = options.maxFrameBytes ?? 1024 * 1024;
    // Held well under the high-water mark: what is held counts in `bufferedAmount`, and a burst
    // must not send updates to the queue (to be merged) that a written socket would have taken.
    this.corked = corkable ? new CorkedWrites(corkable, Math.min(16 * 1024, this.highWaterMark / 2)) : undefined;
  }

  /**
   * The client did not say it reads protocol 3 (its socket offered no `rxagent.3` subprotocol):
   * frames of a protocol-3 session are rewritten into protocol 2 as they are written.
   */
  readsOnlyProtocol2(): void {
    this.downgrade = new ProtocolDowngrade();
  }

  /** Queues one control frame (ack, error, snapshot); never merged. */
  sendFrame(frame: ServerFrame): void {
    const json = repairedJson(frame);
    this.push({ json, size: json.length, kind: frame.type === "snapshot" ? "snapshot" : "control" });
  }

  /**
   * Queues one event frame, serialized once per session and shared by every client. An update
   * given with `mergeable` may be replaced by the next one while it waits.
   */
  sendEvent(frame: LoggedFrame, mergeable?: MergeableUpdate): void {
    if (this.closed) return;
    if (this.replay) {
      // The log has it: the replay reads it in turn.
      this.flush();
      return;
    }
    if (this.owesSnapshot) {
      this.stats.droppedFrames++;
      this.flush();
      return;
    }
    const last = this.held ? this.held[this.held.length - 1] : this.queue.last();
    // Consecutive queued updates belong to the same streaming message (message_start and
    // message_end sit between two messages' updates).
    if (mergeable && last?.mergeable && !this.held) {
      const first = last.first ?? (last.seq as number);
      const { event, message, argumentTexts } = mergeable.merged();
      const seq = frame.seq;
      const merged: QueuedFrame = {
        json: () => JSON.stringify({ type: "update", seq, first, event, message, argumentTexts }),
        // An estimate: the merged frame holds the message, which grew by the deltas merged.
        size: last.size + frame.json.length,
        kind: "event",
        seq,
        first,
        mergeable: true,
      };
      this.stats.queuedBytes += merged.size - last.size;
      this.stats.peakQueuedBytes = Math.max(this.stats.peakQueuedBytes, this.stats.queuedBytes);
      this.queue.replaceLast(merged);
      this.stats.coalescedUpdates++;
      this.checkBudget();
      this.flush();
      return;
    }
    this.push({ json: frame.json, size: frame.json.length, kind: "event", seq: frame.seq, mergeable: mergeable !== undefined });
  }

  /** Sends the session's frames after `afterSeq` from its log, as fast as the socket takes them, then goes live. */
  startReplay(source: ReplaySource, afterSeq: number): void {
    this.replay = { source, next: afterSeq + 1 };
    this.flush();
  }

  /** Forgets queued events of a session this client is leaving; acks and errors stay. */
  dropEvents(): void {
    this.retainControl();
    this.owesSnapshot = false;
    this.replay = undefined;
  }

  /** Holds frames back until `release`, so an ack can go out before the events its command caused. */
  hold(): void {
    this.held ??= [];
  }

  release(frameFirst: ServerFrame): void {
    const held = this.held ?? [];
    this.held = undefined;
    this.sendFrame(frameFirst);
    for (const frame of held) this.push(frame);
  }

  /**
   * Gives up on this client after a frame for it could not be made or sent: nothing more is
   * queued or written, and the server closes its socket (1011). Why not rethrow: the throw would
   * happen inside the session's `events$` subscriber, where rxjs rethrows it on a timer and the
   * process dies with every session in it (issue 27).
   */
  drop(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.clear();
    this.countQueued(-this.stats.queuedBytes);
    this.replay = undefined;
    this.onBroken(reason);
  }

  /** Resolves when everything queued has been written to the kernel (used by graceful shutdown). */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Sends what the socket can take now; called on every enqueue and every write callback. */
  flush(): void {
    if (this.socket.readyState !== OPEN || this.closed) {
      if (this.queue.length > 0) this.retainControl(() => false);
      this.replay = undefined;
      this.notifyIdle();
      return;
    }
    this.stats.bufferedAmount = this.socket.bufferedAmount;
    while (this.socket.bufferedAmount < this.highWaterMark) {
      const frame = this.queue.shift();
      if (frame !== undefined) {
        this.countQueued(-frame.size);
        this.write(typeof frame.json === "string" ? frame.json : frame.json());
        continue;
      }
      if (!this.replay || this.owesSnapshot) break;
      const { source, next } = this.replay;
      if (next > source.lastSeq) {
        this.replay = undefined;
        break;
      }
      const logged = source.read(next);
      if (logged === undefined) {
        // The log moved on while this client read it: a snapshot covers the rest.
        this.replay = undefined;
        this.stats.resyncs++;
        this.owesSnapshot = true;
        break;
      }
      // A merged frame stands for the sequence numbers up to its own.
      this.replay.next = logged.seq + 1;
      this.write(logged.json);
    }
    // Drained means every write handed to the kernel; the snapshot is built now, so it is current.
    if (this.owesSnapshot && this.queue.length === 0 && this.inFlight === 0) {
      this.owesSnapshot = false;
      this.stats.snapshotsSent++;
      this.write(this.snapshotJson());
    }
    this.notifyIdle();
  }

  private push(frame: QueuedFrame): void {
    if (this.closed) return;
    if (frame.kind === "snapshot") this.stats.snapshotsSent++;
    if (this.held) {
      this.held.push(frame);
      return;
    }
    this.queue.push(frame);
    this.countQueued(frame.size);
    this.checkBudget();
    this.flush();
  }

  /** Over the cap: events make room first (a snapshot covers them); acks and errors alone close the client. */
  private checkBudget(): void {
    if (!this.overCap()) return;
    this.overflow();
    if (this.overCap() && !this.closed) {
      this.closed = true;
      this.queue.clear();
      this.countQueued(-this.stats.queuedBytes);
      this.onOverBudget();
    }
  }

  private overCap(): boolean {
    return this.queue.length > this.maxQueuedFrames || this.stats.queuedBytes > this.maxQueuedBytes;
  }

  /** Drops queued events (the snapshot owed covers them) but keeps acks and errors. */
  private overflow(): void {
    const dropped = this.retainControl();
    if (dropped === 0) return;
    this.stats.resyncs++;
    this.stats.droppedFrames += dropped;
    this.owesSnapshot = true;
    this.replay = undefined;
  }

  private retainControl(keep: (frame: QueuedFrame) => boolean = (frame) => frame.kind === "control"): number {
    let bytes = 0;
    const dropped = this.queue.retain((frame) => {
      const kept = keep(frame);
      if (kept) bytes += frame.size;
      return kept;
    });
    this.stats.queuedBytes = bytes;
    this.stats.queuedFrames = this.queue.length;
    return dropped;
  }

  private write(frameJson: string): void {
    let json = frameJson;
    if (this.downgrade !== undefined) {
      // Called from socket callbacks too, where a throw would end the process.
      try {
        json = this.downgrade.frame(frameJson);
      } catch (error) {
        return this.drop(`A frame could not be rewritten into protocol 2 for this client: ${errorText(error)}`);
      }
    }
    for (const part of fragmentFrame(json, this.maxFrameBytes)) {
      this.inFlight++;
      this.stats.sentFrames++;
      this.stats.sentBytes += part.length;
      this.corked?.hold();
      this.socket.send(part, this.written);
      this.corked?.held(part.length);
    }
  }

  private countQueued(bytes: number): void {
    this.stats.queuedBytes += bytes;
    this.stats.queuedFrames = this.queue.length;
    if (bytes > 0) {
      this.stats.peakQueuedFrames = Math.max(this.stats.peakQueuedFrames, this.queue.length);
      this.stats.peakQueuedBytes = Math.max(this.stats.peakQueuedBytes, this.stats.queuedBytes);
    }
  }

  private isIdle(): boolean {
    return (
      this.closed ||
      this.socket.readyState !== OPEN ||
      (this.queue.length === 0 && this.inFlight === 0 && !this.owesSnapshot && this.replay === undefined)
    );
  }

  private notifyIdle(): void {
    if (!this.isIdle() || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
