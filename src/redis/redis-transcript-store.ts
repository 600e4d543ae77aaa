import type { Redis } from "ioredis";
import { errorText } from "../errors.js";
import { safeJsonLine } from "../server/safe-json-line.js";
import type { AgentMessage, TranscriptStore } from "../types.js";
import { withSessionScripts } from "./redis-scripts.js";
import { DEFAULT_KEY_PREFIX, sessionKeys } from "./session-keys.js";

export interface RedisTranscriptStoreOptions {
  /** Default `"rxagent:"`; the list is `<prefix>{<sessionId>}:transcript`. */
  keyPrefix?: string;
  /**
   * Appends only while this lease token holds the session (the runner's store): a process that
   * lost its lease cannot add to a transcript another process now runs.
   */
  fenceToken?: string;
  /** Told about messages Redis refused and elements that could not be read. Default: `console.warn`. */
  onWarning?: (message: string) => void;
}

/**
 * A transcript as a Redis list, one JSON message per element, with the contract of
 * `JsonlTranscriptStore`: appends in order, each one atomic (`RPUSH`), readable from any process.
 *
 * Why `append` can stay synchronous: ioredis hands a command to the socket at once when the
 * connection is ready, so when `append` returns the message is in the kernel's send buffer, which
 * a crash of this process does not lose (the same promise as an unsynced JSONL write). When the
 * connection is not ready, `append` throws instead of queueing in memory, so a message is never
 * silently held where a crash would lose it. `flush()` resolves once Redis has acknowledged every
 * append so far (`appendfsync always` on the server makes that an fsync).
 */
export class RedisTranscriptStore implements TranscriptStore {
  readonly key: string;
  private readonly lease: string;
  private pending: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;

  constructor(
    private readonly redis: Redis,
    readonly sessionId: string,
    private readonly options: RedisTranscriptStoreOptions = {},
  ) {
    const keys = sessionKeys(options.keyPrefix ?? DEFAULT_KEY_PREFIX, sessionId);
    this.key = keys.transcript;
    this.lease = keys.lease;
  }

  async load(): Promise<AgentMessage[]> {
    const elements = await this.redis.lrange(this.key, 0, -1);
    const messages: AgentMessage[] = [];
    elements.forEach((element, index) => {
      try {
        messages.push(JSON.parse(element) as AgentMessage);
      } catch {
        this.warn(`${this.key}[${index}]: skipped an element that is not valid JSON.`);
      }
    });
    return messages;
  }

  append(message: AgentMessage): void {
    this.assertReady("append a message");
    const { line, repaired } = safeJsonLine(message);
    if (repaired) this.warn(`${this.key}: a message held values JSON cannot store (a BigInt or a cycle); stored them in a safe form.`);
    const json = line.slice(0, -1);
    const token = this.options.fenceToken;
    if (token === undefined) return this.track(this.redis.rpush(this.key, json), "append a message");
    const fenced = withSessionScripts(this.redis)
      .rxagentFencedPush(this.lease, this.key, token, json)
      .then((length) => {
        if (length === 0) throw new Error("this process no longer holds the session's lease");
      });
    this.track(fenced, "append a message");
  }

  clear(): void {
    this.assertReady("clear the transcript");
    this.track(this.redis.del(this.key), "clear the transcript");
  }

  /** Resolves once Redis has acknowledged every append and clear so far; rejects with the first it refused. */
  async flush(): Promise<void> {
    await this.pending;
    if (this.failure) throw this.failure;
  }

  private assertReady(what: string): void {
    if (this.redis.status !== "ready") throw new Error(`${this.key}: could not ${what}: Redis is not connected (${this.redis.status}).`);
  }

  private track(command: Promise<unknown>, what: string): void {
    const settled = command.then(
      () => undefined,
      (error: unknown) => {
        this.failure ??= new Error(`${this.key}: could not ${what}: ${errorText(error)}`, { cause: error });
        this.warn(this.failure.message);
      },
    );
    this.pending = Promise.all([this.pending, settled]);
  }

  private warn(message: string): void {
    (this.options.onWarning ?? ((text: string) => console.warn(`rxagent: ${text}`)))(message);
  }
}
