import type { Redis } from "ioredis";
import { errorText } from "../errors.js";
import { storedTranscriptOf as storedEntriesOf } from "../server/jsonl-transcript-store.js";
import { safeJsonLine } from "../server/safe-json-line.js";
import type { AgentMessage, StoredTranscript, TranscriptRecord, TranscriptStore } from "../types.js";
import { callDetached, warnerOf } from "../util/detached-callback.js";
import { withSessionScripts } from "./redis-scripts.js";
import { DEFAULT_KEY_PREFIX, sessionKeys } from "./session-keys.js";
import { SessionQueue } from "./session-queue.js";

export interface RedisTranscriptStoreOptions {
  /** Default `"rxagent:"`; the list is `<prefix>{<sessionId>}:transcript`. */
  keyPrefix?: string;
  /**
   * Appends only while this lease token holds the session (the runner's store): a process that
   * lost its lease cannot add to a transcript another process now runs. Appends after `load`
   * are then exactly once and without a gap (each carries its index).
   */
  fenceToken?: string;
  /**
   * How long an append may wait for Redis (reconnecting after a restart) before the store gives
   * up on it and fails (`onFailure`). Default 30 000.
   */
  saveTimeoutMs?: number;
  /** How many bytes of appends may wait for Redis before the store fails (`onFailure`). Default 8 MiB. */
  maxPendingBytes?: number;
  /**
   * Called once when the store could not save something: Redis refused it, or it waited past
   * `saveTimeoutMs` or `maxPendingBytes`. Appends after it throw. Default: none (the warning only).
   */
  onFailure?: (error: Error) => void;
  /** Told about messages Redis refused and elements that could not be read. Default: `console.warn`. */
  onWarning?: (message: string) => void;
}

/** An append Redis has not acknowledged yet. */
interface PendingAppend {
  bytes: number;
  sentAt: number;
}

/**
 * A transcript as a Redis list, one JSON message per element, with the contract of
 * `JsonlTranscriptStore`: appends in order, each one atomic (`RPUSH`), readable from any process.
 * Records (`TranscriptRecord`: a call waiting for approval, its end, a result held back for call
 * order) are elements of their own, `{"rxagent":{…record}}`, as the JSONL store writes its lines,
 * and fenced the same way, so `Agent.open` in any process reopens the calls that wait.
 *
 * Why `append` can stay synchronous: ioredis hands a command to the socket at once when the
 * connection is ready, so when `append` returns the message is in the kernel's send buffer, which
 * a crash of this process does not lose (the same promise as an unsynced JSONL write). While Redis
 * restarts, ioredis holds the append in its offline queue, in order with the frames the runner
 * sends on the same connection: the two reach Redis together or are lost together, so frames and
 * transcript never disagree. That wait is bounded (`saveTimeoutMs`, `maxPendingBytes`); past it
 * the store fails (`onFailure`), and the runner ends the run as failed. `flush()` resolves once
 * Redis has acknowledged every append so far (`appendfsync always` on the server makes that an fsync).
 */
export class RedisTranscriptStore implements TranscriptStore {
  readonly key: string;
  /**
   * With `fenceToken` (the runner's store): the session's queued steering and follow-up messages,
   * which an append of one of them removes in the same script (`SessionQueue`).
   */
  readonly queue: SessionQueue | undefined;
  private readonly lease: string;
  private readonly meta: string;
  private readonly queueKey: string;
  private readonly framesKey: string;
  private pending: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;
  /** The list's length once every append so far lands; undefined until `load` (or without a fence). */
  private length: number | undefined;
  private readonly waiting = new Map<number, PendingAppend>();
  private waitingBytes = 0;
  private nextAppend = 0;
  private deadline: ReturnType<typeof setTimeout> | undefined;
  private superseded = false;
  /** Set by `watchNextWrite`: where the outcome of the next fenced write goes. */
  private watching: { outcome?: Promise<boolean> } | undefined;

  constructor(
    private readonly redis: Redis,
    readonly sessionId: string,
    private readonly options: RedisTranscriptStoreOptions = {},
  ) {
    const keys = sessionKeys(options.keyPrefix ?? DEFAULT_KEY_PREFIX, sessionId);
    this.key = keys.transcript;
    this.lease = keys.lease;
    this.meta = keys.meta;
    this.queueKey = keys.queue;
    this.framesKey = keys.frames;
    this.queue = options.fenceToken === undefined ? undefined : new SessionQueue(withSessionScripts(redis), keys, options.fenceToken);
  }

  async load(): Promise<AgentMessage[]> {
    return (await this.loadTranscript()).messages;
  }

  async loadTranscript(): Promise<StoredTranscript> {
    const elements = await this.redis.lrange(this.key, 0, -1);
    if (this.options.fenceToken !== undefined) this.length = elements.length;
    return storedTranscriptOf(elements, this.key, (message) => this.warn(message));
  }

  append(message: AgentMessage): void {
    const { line, repaired } = safeJsonLine(message);
    if (repaired) this.warn(`${this.key}: a message held values JSON cannot store (a BigInt, a cycle, a toJSON that throws); stored them in a safe form.`);
    this.push(line.slice(0, -1), "append a message", message);
  }

  record(record: TranscriptRecord): void {
    const { line, repaired } = safeJsonLine({ rxagent: record });
    if (repaired) this.warn(`${this.key}: a record held values JSON cannot store (a BigInt, a cycle, a toJSON that throws); stored them in a safe form.`);
    this.push(line.slice(0, -1), `keep a ${record.type} record`);
  }

  clear(): void {
    if (this.failure) throw this.failure;
    if (this.length !== undefined) this.length = 0;
    this.track(this.redis.del(this.key), "clear the transcript", 0);
  }

  /**
   * Makes `messages`, then `records`, the whole list (`Agent.replaceState`) in one script, fenced as appends are:
   * other processes read the old transcript or the new one, never a mix. Like `append`, it is
   * sent at once and acknowledged later (`flush`); a refusal fails the store (`onFailure`).
   */
  replace(messages: readonly AgentMessage[], records: readonly TranscriptRecord[] = []): void {
    if (this.failure) throw new Error(`${this.key}: could not replace the transcript: an earlier write failed (${this.failure.message})`);
    if (this.superseded) return;
    const elements = [...messages, ...records.map((record) => ({ rxagent: record }))].map((entry) => {
      const { line, repaired } = safeJsonLine(entry);
      if (repaired) this.warn(`${this.key}: a message or record held values JSON cannot store (a BigInt, a cycle, a toJSON that throws); stored them in a safe form.`);
      return line.slice(0, -1);
    });
    const token = this.options.fenceToken;
    if (this.length !== undefined) this.length = elements.length;
    const replaced = withSessionScripts(this.redis)
      .rxagentReplaceTranscript(this.lease, this.key, token ?? "", ...elements)
      .then((done) => {
        if (done === 0) throw new Error("this process no longer holds the session's lease");
      });
    this.track(replaced, "replace the transcript", elements.reduce((bytes, element) => bytes + Buffer.byteLength(element), 0));
  }

  /** Resolves once Redis has acknowledged every append and clear so far; rejects with the first it refused. */
  async flush(): Promise<void> {
    await this.pending;
    if (this.failure) throw this.failure;
  }

  /**
   * Stops writing, for a runner that learned it lost the lease: Redis would refuse every write
   * (the fence), and another process now keeps the transcript. Later appends and records are
   * dropped without a warning (what the aborted run still says is not part of the session).
   */
  supersede(): void {
    this.superseded = true;
  }

  /**
   * Watches the next fenced append or record: the returned function gives whether Redis stored it
   * (false: the lease was lost before it), or undefined when none was sent since. Why: a command
   * that reached the runner is taken once its first transcript write is stored (a takeover
   * goes on from it), and not taken at all when Redis refused that write.
   */
  watchNextWrite(): () => Promise<boolean> | undefined {
    const watch: { outcome?: Promise<boolean> } = {};
    this.watching = watch;
    return () => {
      if (this.watching === watch) this.watching = undefined;
      return watch.outcome;
    };
  }

  /** `message`: the message appended, when it is one (it may be a queued one, which leaves the queue with its append). */
  private push(json: string, what: string, message?: AgentMessage): void {
    if (this.superseded) return;
    if (this.failure) throw new Error(`${this.key}: could not ${what}: an earlier write failed (${this.failure.message})`);
    const bytes = Buffer.byteLength(json);
    const maxPendingBytes = this.options.maxPendingBytes ?? 8 * 1024 * 1024;
    if (this.waitingBytes + bytes > maxPendingBytes) {
      this.fail(new Error(`${this.key}: could not ${what}: more than ${maxPendingBytes} bytes of appends waited for Redis (${this.redis.status}).`));
      throw this.failure;
    }
    const token = this.options.fenceToken;
    if (token === undefined) return this.track(this.redis.rpush(this.key, json), what, bytes);
    const index = this.length ?? "";
    if (this.length !== undefined) this.length += 1;
    const queued = message && this.queue ? this.queue.take(message) : "";
    const [steering, followUp] = this.queue?.counts ?? [0, 0];
    const sent = withSessionScripts(this.redis).rxagentFencedPush(this.lease, this.key, this.meta, this.queueKey, token, json, index, queued, steering, followUp, this.framesKey);
    let outcome: Promise<boolean> | undefined;
    const stored = (): Promise<boolean> => {
      if (!outcome) {
        outcome = sent.then((length) => length > 0);
        // Its failure is the store's to handle (below); a watcher hears it from its own promise.
        outcome.catch(() => undefined);
      }
      return outcome;
    };
    if (message && queued === "") this.queue?.noteAppended(message, stored);
    if (this.watching) {
      this.watching.outcome = stored();
      this.watching = undefined;
    }
    const fenced = sent.then((length) => {
      if (length === 0) throw new Error("this process no longer holds the session's lease");
      if (length === -1) throw new Error("an earlier append never reached Redis (the session is marked broken)");
    });
    this.track(fenced, what, bytes);
  }

  private track(command: Promise<unknown>, what: string, bytes: number): void {
    const id = this.nextAppend++;
    this.waiting.set(id, { bytes, sentAt: Date.now() });
    this.waitingBytes += bytes;
    this.armDeadline();
    const settled = command.then(
      () => this.settle(id),
      (error: unknown) => {
        this.settle(id);
        this.fail(new Error(`${this.key}: could not ${what}: ${errorText(error)}`, { cause: error }));
      },
    );
    this.pending = Promise.all([this.pending, settled]);
  }

  private settle(id: number): void {
    const append = this.waiting.get(id);
    if (!append) return;
    this.waiting.delete(id);
    this.waitingBytes -= append.bytes;
  }

  /** Wakes when the oldest append waiting would pass `saveTimeoutMs`. */
  private armDeadline(): void {
    if (this.deadline !== undefined || this.failure) return;
    const oldest = this.waiting.values().next().value;
    if (!oldest) return;
    const timeoutMs = this.options.saveTimeoutMs ?? 30_000;
    this.deadline = setTimeout(() => {
      this.deadline = undefined;
      const first = this.waiting.values().next().value;
      if (first && Date.now() - first.sentAt >= timeoutMs) {
        this.fail(new Error(`${this.key}: an append waited more than ${timeoutMs} ms for Redis (${this.redis.status}); the transcript could not be saved.`));
        return;
      }
      this.armDeadline();
    }, Math.max(0, oldest.sentAt + timeoutMs - Date.now()));
    this.deadline.unref();
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    clearTimeout(this.deadline);
    this.warn(error.message);
    // Not from inside `append`: the agent is in the middle of handling an event, and the runner's
    // answer to a failure disposes it.
    queueMicrotask(() => callDetached("onFailure", this.options.onFailure, [error], (message) => this.warn(message)));
  }

  private warn(message: string): void {
    warnerOf(this.options.onWarning)(message);
  }
}

/**
 * A transcript list's elements as messages and the records of the last batch, read as
 * `JsonlTranscriptStore.loadTranscript` reads its lines: an element that is not JSON, or a record
 * rxagent does not write, is skipped with a warning.
 */
export function storedTranscriptOf(elements: readonly string[], key: string, warn: (message: string) => void): StoredTranscript {
  return storedEntriesOf(elements, { where: (index) => `${key}[${index}]`, notJson: () => "an element that is not valid JSON" }, warn);
}
