import type { AgentEvent } from "../types.js";
import type { ServerFrame } from "../protocol/protocol-schemas.js";

/** The part of a `ws` WebSocket the send queue needs (a fake in tests is easy). */
export interface SendableSocket {
  /** Bytes handed to `send` but not yet written to the kernel. */
  readonly bufferedAmount: number;
  readonly readyState: number;
  send(data: string, callback: (error?: Error) => void): void;
}

/**
 * How a client that reads slower than the agent writes is handled. See PROTOCOL.md,
 * "Backpressure".
 */
export interface BackpressureOptions {
  /**
   * While the socket has this many bytes or more unwritten, frames wait in the client's queue
   * (where consecutive `message_update`s are merged) instead of piling up inside `ws`.
   * Contract: positive. Default 64 KiB.
   */
  highWaterMark?: number;
  /** Past this many queued frames the queue is dropped and the client gets a snapshot once it drains. Default 512. */
  maxQueuedFrames?: number;
  /** Same, in bytes of queued JSON. Default 8 MiB. */
  maxQueuedBytes?: number;
}

/** Per-client counters, for monitoring and for tests that check memory stays bounded. */
export interface ClientStats {
  sentFrames: number;
  sentBytes: number;
  /** Frames waiting in the queue now, and the most there ever were. */
  queuedFrames: number;
  peakQueuedFrames: number;
  queuedBytes: number;
  peakQueuedBytes: number;
  /** `message_update` frames merged into a later one instead of being sent. */
  coalescedUpdates: number;
  /** Times the queue hit its cap and the client was switched to a snapshot. */
  resyncs: number;
  /** Event frames thrown away by a resync (the snapshot that follows covers them). */
  droppedFrames: number;
  snapshotsSent: number;
  /** `bufferedAmount` of the socket now. */
  bufferedAmount: number;
}

interface QueuedFrame {
  json: string;
  kind: "event" | "snapshot" | "control";
  /** Set on event frames: lets a later `message_update` replace this one. */
  event?: { seq: number; first: number; type: AgentEvent["type"]; eventJson: string };
}

const OPEN = 1;

/**
 * The send side of one client: writes frames while the socket keeps up, queues (and merges
 * deltas) while it does not, and past a hard cap drops the queue and owes the client a snapshot,
 * sent when it has drained. The agent and the other clients never wait for this client.
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
  private readonly queue: QueuedFrame[] = [];
  private readonly highWaterMark: number;
  private readonly maxQueuedFrames: number;
  private readonly maxQueuedBytes: number;
  /** Frames passed to `send` whose write callback has not fired: they wake the queue. */
  private inFlight = 0;
  private holdIndex: number | undefined;
  /** Set after an overflow: events are dropped until a snapshot has been sent. */
  private owesSnapshot = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly socket: SendableSocket,
    /** Builds a snapshot frame of the session as it is now; called when one is owed and the socket has drained. */
    private readonly snapshotJson: () => string,
    options: BackpressureOptions = {},
  ) {
    this.highWaterMark = options.highWaterMark ?? 64 * 1024;
    this.maxQueuedFrames = options.maxQueuedFrames ?? 512;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 8 * 1024 * 1024;
  }

  /** Queues one control frame (ack, error, snapshot); never merged, never dropped by a cap. */
  sendFrame(frame: ServerFrame): void {
    if (frame.type === "snapshot") this.stats.snapshotsSent++;
    this.push({ json: JSON.stringify(frame), kind: frame.type === "snapshot" ? "snapshot" : "control" });
  }

  /** Queues one event; `eventJson` is serialized once per session and shared by every client. */
  sendEvent(seq: number, type: AgentEvent["type"], eventJson: string): void {
    if (this.owesSnapshot) {
      this.stats.droppedFrames++;
      this.flush();
      return;
    }
    const last = this.queue[this.queue.length - 1];
    // Consecutive queued updates belong to the same streaming message (message_start and
    // message_end sit between two messages' updates), and each carries the whole partial.
    if (type === "message_update" && last?.event?.type === "message_update" && this.holdIndex !== this.queue.length) {
      const first = last.event.first;
      this.replaceLast({ json: eventFrameJson(seq, first, eventJson), kind: "event", event: { seq, first, type, eventJson } });
      this.stats.coalescedUpdates++;
      this.flush();
      return;
    }
    this.push({ json: eventFrameJson(seq, seq, eventJson), kind: "event", event: { seq, first: seq, type, eventJson } });
  }

  /** Forgets queued events of a session this client is leaving; acks and errors stay. */
  dropEvents(): void {
    const kept = this.queue.filter((frame) => frame.kind === "control");
    this.clearQueue();
    for (const frame of kept) this.push(frame);
    this.owesSnapshot = false;
  }

  /** Holds frames back until `release`, so an ack can go out before the events its command caused. */
  hold(): void {
    this.holdIndex = this.queue.length;
  }

  release(frameFirst: ServerFrame): void {
    const index = Math.min(this.holdIndex ?? this.queue.length, this.queue.length);
    this.holdIndex = undefined;
    const json = JSON.stringify(frameFirst);
    this.queue.splice(index, 0, { json, kind: "control" });
    this.countQueued(json.length);
    this.flush();
  }

  /** Resolves when everything queued has been written to the kernel (used by graceful shutdown). */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Sends what the socket can take now; called on every enqueue and every write callback. */
  flush(): void {
    this.stats.bufferedAmount = this.socket.bufferedAmount;
    if (this.socket.readyState !== OPEN) {
      this.clearQueue();
      this.notifyIdle();
      return;
    }
    if (this.holdIndex !== undefined) return;
    // While a snapshot is owed the queue holds only acks and errors, which go first.
    while (this.queue.length > 0 && this.socket.bufferedAmount < this.highWaterMark) {
      const frame = this.queue.shift() as QueuedFrame;
      this.countQueued(-frame.json.length, -1);
      this.write(frame.json);
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
    this.queue.push(frame);
    this.countQueued(frame.json.length);
    // Only an event can overflow: control frames are never dropped, so they cannot make room
    // (and the rate limit bounds how many a client that does not read can be owed).
    if (frame.kind !== "control" && (this.queue.length > this.maxQueuedFrames || this.stats.queuedBytes > this.maxQueuedBytes)) {
      this.overflow();
    }
    this.flush();
  }

  private replaceLast(frame: QueuedFrame): void {
    const previous = this.queue.pop() as QueuedFrame;
    this.queue.push(frame);
    this.stats.queuedBytes += frame.json.length - previous.json.length;
    this.stats.peakQueuedBytes = Math.max(this.stats.peakQueuedBytes, this.stats.queuedBytes);
  }

  /** Drops queued events (the snapshot owed covers them) but keeps acks and errors. */
  private overflow(): void {
    this.stats.resyncs++;
    const kept = this.queue.filter((frame) => frame.kind === "control");
    this.stats.droppedFrames += this.queue.length - kept.length;
    this.clearQueue();
    for (const frame of kept) {
      this.queue.push(frame);
      this.countQueued(frame.json.length);
    }
    this.owesSnapshot = true;
  }

  private write(json: string): void {
    this.inFlight++;
    this.stats.sentFrames++;
    this.stats.sentBytes += json.length;
    this.socket.send(json, () => {
      this.inFlight--;
      this.flush();
    });
  }

  private countQueued(bytes: number, frames = 1): void {
    this.stats.queuedBytes += bytes;
    this.stats.queuedFrames = this.queue.length;
    if (frames > 0) {
      this.stats.peakQueuedFrames = Math.max(this.stats.peakQueuedFrames, this.queue.length);
      this.stats.peakQueuedBytes = Math.max(this.stats.peakQueuedBytes, this.stats.queuedBytes);
    }
  }

  private clearQueue(): void {
    this.queue.length = 0;
    this.stats.queuedFrames = 0;
    this.stats.queuedBytes = 0;
  }

  private isIdle(): boolean {
    return this.socket.readyState !== OPEN || (this.queue.length === 0 && this.inFlight === 0 && !this.owesSnapshot);
  }

  private notifyIdle(): void {
    if (!this.isIdle() || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function eventFrameJson(seq: number, first: number, eventJson: string): string {
  const range = first === seq ? "" : `,"first":${first}`;
  return `{"type":"event","seq":${seq}${range},"event":${eventJson}}`;
}
