import { errorText } from "../errors.js";
import type { CommandQueue } from "./command-queue.js";
import { queuedFromMeta, readSession } from "./read-session.js";
import type { RedisSessionContext } from "./redis-session-context.js";
import type { SessionKeys } from "./session-keys.js";
import type { SessionMirror } from "./session-mirror.js";

/** The sequence number at the start of a stream frame (`{"type":"event","seq":12,...`); an `end` frame (protocol 3) may have nothing after it. */
const FRAME_SEQ = /^\{"type":"(?:event|update|end)","seq":(\d+)[,}]/;

/**
 * How the frames of a session reach this process's mirror of it: read from Redis when the session
 * is opened (or read again), then from the session's channel, in order; a gap in the channel (it
 * was down) is filled from the stream, and a mirror that cannot follow is read again.
 */
export class SessionFrames {
  /** Frames that arrived while the mirror was being filled from the stream. */
  private held: string[] | undefined = [];
  private reloading = false;
  private current!: SessionMirror;

  constructor(
    private readonly context: RedisSessionContext,
    private readonly id: string,
    private readonly keys: SessionKeys,
    /** Where a reading of the session again waits its turn (commands and takeovers wait for it). */
    private readonly queue: CommandQueue,
  ) {}

  /** The mirror: undefined only until `load` first resolves. */
  get mirror(): SessionMirror {
    return this.current;
  }

  /** Reads the session in one transaction; frames published meanwhile wait in `held`. */
  async load(): Promise<void> {
    this.current = await readSession(this.context.redis, this.keys, this.id, this.context.maxEvents, this.context.warn);
    const held = this.held ?? [];
    this.held = undefined;
    for (const message of held) this.receive(message);
  }

  /**
   * Reads the session again after this process lost its lease: the frames it made after the
   * loss were refused, and the new runner numbers its own from the last stored one, so the
   * clients here start again from a snapshot.
   */
  reload(): void {
    if (this.reloading) return;
    this.reloading = true;
    const previous = this.current;
    this.held = [];
    const reloaded = this.load().then(
      () => {
        this.reloading = false;
        previous.handOver(this.current);
      },
      (error: unknown) => {
        this.reloading = false;
        this.held = undefined;
        this.context.warn(`session ${this.id}: could not read it again after losing its lease: ${errorText(error)}`);
      },
    );
    // Commands and takeovers wait for it. A takeover made meanwhile ran on the mirror being
    // replaced, which holds the frames Redis refused: it numbered its frames after them, and the
    // hole it left in the stream stopped every mirror before it (issue 28, the chaos test's resume
    // that never reached the last stored frame).
    this.queue.push(() => reloaded);
  }

  /** Reads the frames and the queue counts the channel may have missed (it was down) from Redis. */
  resync(): void {
    if (this.held || !this.current) return;
    this.readStream().catch((error: unknown) => this.context.warn(`session ${this.id}: could not read missed frames: ${errorText(error)}`));
    const mirror = this.current;
    this.context.redis.hmget(this.keys.meta, "queueVersion", "queuedSteering", "queuedFollowUp").then(
      ([queueVersion, queuedSteering, queuedFollowUp]) => queuedFromMeta(mirror, { queueVersion, queuedSteering, queuedFollowUp }),
      (error: unknown) => this.context.warn(`session ${this.id}: could not read its queue counts: ${errorText(error)}`),
    );
  }

  /** A frame, a reset or the queue's counts, published by the runner (possibly this process's own frame, already applied). */
  receive(message: string): void {
    if (this.held) {
      this.held.push(message);
      return;
    }
    const match = FRAME_SEQ.exec(message);
    if (!match) {
      const notice = noticeOf(message);
      if (notice === undefined) {
        // Anyone who can publish on the channel can send this; thrown, it would leave ioredis's
        // event handler and end the process.
        this.context.warn(`session ${this.id}: ignored a message on its channel that is neither a frame nor a notice: ${message.slice(0, 80)}`);
        return;
      }
      if (notice.type === "queue") {
        if (notice.epoch === this.current.epoch) this.current.queued(notice.version, notice.steering, notice.followUp);
      } else if (notice.epoch !== this.current.epoch) this.current.reset(notice.seq, notice.epoch);
      return;
    }
    if (!this.apply(Number(match[1]), message)) this.catchUp(message);
  }

  /** Applies every frame of the stream after the mirror's last one. */
  async readStream(): Promise<void> {
    const entries = await this.context.redis.xrange(this.keys.events, `${this.current.lastSeq + 1}-0`, "+");
    for (const [id, fields] of entries) this.apply(Number.parseInt(id, 10), fields[3] as string);
  }

  /** A frame came after a gap (the channel was down): the missing ones come from the stream. */
  private catchUp(message: string): void {
    const held = [message];
    this.held = held;
    const from = this.current.lastSeq + 1;
    this.context.redis.xrange(this.keys.events, `${from}-0`, "+").then(
      (entries) => {
        // The session is being read again (`reload`), which took over `held`: its read, sent after
        // this one, covers these frames. Taking its `held` here sent the frames that came before
        // its answer to the mirror it replaces, and the new mirror never had them.
        if (this.held !== held) return;
        this.held = undefined;
        for (const [id, fields] of entries) this.apply(Number.parseInt(id, 10), fields[3] as string);
        for (const later of held) {
          const match = FRAME_SEQ.exec(later);
          if (match && !this.apply(Number(match[1]), later)) this.context.warn(`session ${this.id}: frame ${match[1]} came after a gap the stream no longer covers; clients here may need a snapshot.`);
        }
      },
      (error: unknown) => {
        if (this.held === held) this.held = undefined;
        this.context.warn(`session ${this.id}: could not read missed frames: ${errorText(error)}`);
      },
    );
  }

  /**
   * Applies a frame read from Redis to the mirror. A frame the mirror cannot follow (an update
   * whose message it never saw started, seen in the chaos test after a takeover) must not throw
   * inside ioredis's event handler, where it would crash the process: the session is read again
   * and the clients here get a snapshot. Returns false when the frame is not the next one.
   */
  private apply(seq: number, json: string): boolean {
    try {
      return this.current.applyJson(seq, json);
    } catch (error) {
      this.context.warn(`session ${this.id}: frame ${seq} could not be applied (${errorText(error)}); reading the session again.`);
      this.reload();
      return true;
    }
  }
}

type Notice = { type: "reset"; seq: number; epoch: string } | { type: "queue"; epoch: string; version: number; steering: number; followUp: number };

/** A runner's notice on the channel (a reset, the queue's counts), or undefined for anything else. */
function noticeOf(message: string): Notice | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const notice = value as Record<string, unknown>;
  const isCount = (field: unknown) => typeof field === "number" && Number.isFinite(field);
  if (typeof notice.epoch !== "string") return undefined;
  if (notice.type === "reset" && isCount(notice.seq)) return notice as Notice;
  if (notice.type === "queue" && isCount(notice.version) && isCount(notice.steering) && isCount(notice.followUp)) return notice as Notice;
  return undefined;
}
