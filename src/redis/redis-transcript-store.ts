import type { Redis } from "ioredis";
import { errorText } from "../errors.js";
import { checkedRecord, isRecordLine } from "../server/jsonl-transcript-store.js";
import { safeJsonLine } from "../server/safe-json-line.js";
import { roleOf } from "../types/messages.js";
import type { AgentMessage, StoredTranscript, TranscriptRecord, TranscriptStore } from "../types.js";
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
 * Records (`TranscriptRecord`: a call waiting for approval, its end, a result held back for call
 * order) are elements of their own, `{"rxagent":{…record}}`, as the JSONL store writes its lines,
 * and fenced the same way, so `Agent.open` in any process reopens the calls that wait.
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
  private readonly meta: string;
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
    this.meta = keys.meta;
  }

  async load(): Promise<AgentMessage[]> {
    return (await this.loadTranscript()).messages;
  }

  async loadTranscript(): Promise<StoredTranscript> {
    return storedTranscriptOf(await this.redis.lrange(this.key, 0, -1), this.key, (message) => this.warn(message));
  }

  append(message: AgentMessage): void {
    const { line, repaired } = safeJsonLine(message);
    if (repaired) this.warn(`${this.key}: a message held values JSON cannot store (a BigInt or a cycle); stored them in a safe form.`);
    this.push(line.slice(0, -1), "append a message");
  }

  record(record: TranscriptRecord): void {
    const { line, repaired } = safeJsonLine({ rxagent: record });
    if (repaired) this.warn(`${this.key}: a record held values JSON cannot store (a BigInt or a cycle); stored them in a safe form.`);
    this.push(line.slice(0, -1), `keep a ${record.type} record`);
  }

  private push(json: string, what: string): void {
    this.assertReady(what);
    const token = this.options.fenceToken;
    if (token === undefined) return this.track(this.redis.rpush(this.key, json), what);
    const fenced = withSessionScripts(this.redis)
      .rxagentFencedPush(this.lease, this.key, this.meta, token, json)
      .then((length) => {
        if (length === 0) throw new Error("this process no longer holds the session's lease");
      });
    this.track(fenced, what);
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

/**
 * A transcript list's elements as messages and the records of the last batch, read as
 * `JsonlTranscriptStore.loadTranscript` reads its lines: an element that is not JSON, or a record
 * rxagent does not write, is skipped with a warning.
 */
export function storedTranscriptOf(elements: readonly string[], key: string, warn: (message: string) => void): StoredTranscript {
  const messages: AgentMessage[] = [];
  let records: TranscriptRecord[] = [];
  elements.forEach((element, index) => {
    let value: unknown;
    try {
      value = JSON.parse(element);
    } catch {
      return warn(`${key}[${index}]: skipped an element that is not valid JSON.`);
    }
    if (!isRecordLine(value)) {
      messages.push(value as AgentMessage);
      // Records describe the last assistant message's batch: any other message but its results closes it.
      if (roleOf(value as AgentMessage) !== "toolResult") records = [];
      return;
    }
    const record = checkedRecord(value.rxagent);
    if (record) records.push(record);
    else warn(`${key}[${index}]: skipped a record that is not one rxagent writes: ${element.slice(0, 200)}`);
  });
  return { messages, records };
}
