import type { AgentEvent } from "../types.js";

/** One event of a session as it goes on the wire: serialized once, shared by every client. */
export interface LoggedFrame {
  seq: number;
  type: AgentEvent["type"];
  /** The whole frame (`event` or `update`), sequence number included. */
  readonly json: string;
  /** `json.length`, given when reading `json` builds it (see `RebuiltUpdateFrame`). */
  readonly jsonLength?: number;
  /**
   * A frame that stands for several sequence numbers up to `seq` (`MergedUpdateFrame`): the same
   * frame for `first..seq`, so a client resuming inside the range reads on from there.
   */
  from?(first: number): LoggedFrame;
}

/**
 * The recent events of one session, for clients that reconnect. Small on purpose, so another
 * store (Redis Streams) can take its place: append in order, read from a sequence number, and
 * an epoch that changes whenever earlier sequence numbers stop describing the session.
 */
export interface EventLog {
  /** Changes on `reset`: a client from another epoch needs a snapshot. */
  readonly epoch: string;
  /** The frame after which the log starts: `read(oldestSeq + 1)` is its first frame, if any. */
  readonly oldestSeq: number;
  append(frame: LoggedFrame): void;
  /** The frame with this sequence number, or undefined when it is not (or no longer) held. */
  read(seq: number): LoggedFrame | undefined;
  /** Forgets every frame and starts a new epoch after `seq`. */
  reset(seq: number, epoch: string): void;
  /**
   * Replaces the frames from `first` to `last` with one that stands for all of them (a streamed
   * message's updates, merged once it ended: `MergedUpdateFrame`), made by `build` from what the
   * replaced frames measured (their JSON's length, for the log's byte bound); `read(seq)` of a
   * number in the range then gives `frame.from(seq)`. Optional: a log without it keeps every frame.
   */
  merge?(first: number, last: number, build: (jsonLength: number) => LoggedFrame): void;
}

/** How much of a session's history is kept for clients that reconnect. */
export interface EventLogOptions {
  /** Frames kept for resume; a client further behind gets a snapshot. Default 50 000 (a long reply is one frame per delta). */
  maxEvents?: number;
  /** Same, in characters of frame JSON. Default 8 MiB. */
  maxBytes?: number;
}

/**
 * The in-memory `EventLog`: a ring of recent frames, bounded in count and bytes, with O(1)
 * append, eviction and lookup by sequence number.
 */
export class MemoryEventLog implements EventLog {
  private frames: (LoggedFrame | undefined)[] = [];
  private head = 0;
  private bytes = 0;
  private firstSeq: number;
  private readonly maxEvents: number;
  private readonly maxBytes: number;

  constructor(
    public epoch: string,
    options: EventLogOptions = {},
  ) {
    this.maxEvents = options.maxEvents ?? 50_000;
    this.maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
    this.firstSeq = 1;
  }

  get oldestSeq(): number {
    return this.firstSeq - 1;
  }

  get size(): number {
    return this.frames.length - this.head;
  }

  append(frame: LoggedFrame): void {
    if (this.size === 0) this.firstSeq = frame.seq;
    this.frames.push(frame);
    this.bytes += frameLength(frame);
    while (this.size > this.maxEvents || (this.bytes > this.maxBytes && this.size > 1)) {
      const oldest = this.frames[this.head];
      this.frames[this.head++] = undefined;
      // A slot per sequence number: a merged frame fills its range's slots, and leaves with the last.
      if (oldest !== undefined && oldest.seq === this.firstSeq) this.bytes -= frameLength(oldest);
      this.firstSeq++;
    }
    // Compacted once the dead prefix is as long as the live part, so eviction stays O(1) amortized.
    if (this.head > 1024 && this.head * 2 > this.frames.length) {
      this.frames = this.frames.slice(this.head);
      this.head = 0;
    }
  }

  /** See `EventLog.merge`; nothing when the range is not all held (its start was evicted). */
  merge(first: number, last: number, build: (jsonLength: number) => LoggedFrame): void {
    if (first < this.firstSeq || first > last || last >= this.firstSeq + this.size) return;
    const from = this.head + (first - this.firstSeq);
    const to = this.head + (last - this.firstSeq);
    let replacedBytes = 0;
    for (let slot = from; slot <= to; slot++) {
      const replaced = this.frames[slot];
      if (replaced !== undefined && replaced.seq === this.firstSeq + (slot - this.head)) replacedBytes += frameLength(replaced);
    }
    const frame = build(replacedBytes);
    this.frames.fill(frame, from, to + 1);
    this.bytes += frameLength(frame) - replacedBytes;
  }

  read(seq: number): LoggedFrame | undefined {
    if (seq < this.firstSeq) return undefined;
    const frame = this.frames[this.head + (seq - this.firstSeq)];
    return frame !== undefined && frame.seq !== seq && frame.from !== undefined ? frame.from(seq) : frame;
  }

  reset(seq: number, epoch: string): void {
    this.frames = [];
    this.head = 0;
    this.bytes = 0;
    this.firstSeq = seq + 1;
    this.epoch = epoch;
  }
}

function frameLength(frame: LoggedFrame): number {
  return frame.jsonLength ?? frame.json.length;
}
