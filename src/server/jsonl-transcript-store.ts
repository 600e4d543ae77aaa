import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { errorText } from "../errors.js";
import { roleOf } from "../types/messages.js";
import { problemOfMessage, THINKING_LEVELS } from "../streams/check-config.js";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../util/json-depth.js";
import type { AgentMessage, StoredSettings, StoredTranscript, ThinkingLevel, TranscriptRecord, TranscriptStore } from "../types.js";
import { warnerOf } from "../util/detached-callback.js";
import { type DescriptorHolder, type DescriptorPool, sharedDescriptorPool } from "./descriptor-pool.js";
import { safeJsonLine } from "./safe-json-line.js";

export interface JsonlTranscriptStoreOptions {
  /** Also `fsync` after each message, for durability against power loss, not only crashes. */
  fsync?: boolean;
  /** Told about lines that could not be read. Default: `console.warn`. */
  onWarning?: (message: string) => void;
  /**
   * Bounds the descriptors open at once across stores: a store whose file was used least recently
   * closes it, and reopens it on its next write. Default: one pool of 64 shared by the process.
   * @example new JsonlTranscriptStore(path, { descriptors: new DescriptorPool(16) })
   */
  descriptors?: DescriptorPool;
}

/**
 * A transcript as a JSON Lines file: one message per line, appended as each message ends.
 *
 * Why synchronous writes: a message must be on disk, in order, before the loop moves on, so a
 * process killed mid-run loses nothing that had ended. A torn last line (the process died
 * mid-write) is skipped with a warning and cut off before the next append; a complete last line
 * that only lacks its newline is kept. `append` writes the whole line or throws (a full disk),
 * leaving the file as it was. Values `JSON.stringify` refuses (a BigInt, a cycle) are stored in a
 * safe form, with a warning, so no message goes missing.
 *
 * Records (`TranscriptRecord`: a call waiting for approval, its end, a result held back for call
 * order) are lines of their own, `{"rxagent":{…record}}`, written the same way; a message always
 * has a `role`, so the two never mix up. `load` skips them; `loadTranscript` returns them.
 *
 * The file stays open between writes, within a bound: stores share a `DescriptorPool`, which closes
 * the file of the store used least recently when too many are open, so thousands of sessions fit
 * in any `ulimit -n`.
 */
export class JsonlTranscriptStore implements TranscriptStore, DescriptorHolder {
  private descriptor: number | undefined;
  /** The file's size: where a failed append cuts back to. */
  private size = 0;
  /** Whether the file's last line was checked since this store first opened it (see `endLastLine`). */
  private checked = false;

  constructor(
    readonly path: string,
    private readonly options: JsonlTranscriptStoreOptions = {},
  ) {}

  async load(): Promise<AgentMessage[]> {
    return (await this.loadTranscript()).messages;
  }

  async loadTranscript(): Promise<StoredTranscript> {
    const text = await readTranscriptText(this.path);
    if (text === undefined) return { messages: [], records: [] };
    const lines = text.split("\n");
    return storedTranscriptOf(lines, {
      where: (index) => `${this.path}:${index + 1}`,
      notJson: (index) => `a line that is not valid JSON${index === lines.length - 1 ? " (torn last line, cut off)" : ""}`,
    }, (message) => this.warn(message));
  }

  append(message: AgentMessage): void {
    this.writeLine(this.lineOf(message), "a message");
  }

  private lineOf(message: AgentMessage): string {
    const { line, repaired } = safeJsonLine(message);
    if (repaired) this.warn(`${this.path}: a message held values JSON cannot store (a BigInt, a cycle, a toJSON that throws); stored them in a safe form.`);
    return line;
  }

  record(record: TranscriptRecord): void {
    this.writeLine(this.recordLineOf(record), "a record");
  }

  private recordLineOf(record: TranscriptRecord): string {
    const { line, repaired } = safeJsonLine({ rxagent: record });
    if (repaired) this.warn(`${this.path}: a record held values JSON cannot store (a BigInt, a cycle, a toJSON that throws); stored them in a safe form.`);
    return line;
  }

  private writeLine(line: string, what: string): void {
    const descriptor = this.open();
    const bytes = Buffer.from(line, "utf8");
    const before = this.size;
    try {
      // writeSync may write less than asked (a nearly full disk): go on until all is written.
      let written = 0;
      while (written < bytes.length) written += writeSync(descriptor, bytes, written, bytes.length - written);
      if (this.options.fsync) fsyncSync(descriptor);
    } catch (error) {
      // Half a line would glue the next message onto it, and load() would drop both.
      try {
        ftruncateSync(descriptor, before);
      } catch {
        // The next open cuts what is left of the line as a torn tail.
        this.close();
      }
      throw new Error(`${this.path}: could not append ${what}: ${errorText(error)}`, { cause: error });
    }
    this.size = before + bytes.length;
  }

  clear(): void {
    ftruncateSync(this.open(), 0);
    this.size = 0;
  }

  /**
   * Makes `messages`, then `records`, the whole file (`Agent.replaceState`): written beside it,
   * then renamed over it. Why not truncate and append: a crash in between would lose the transcript; a rename
   * leaves the old file or the new one, never half of either. Throws, leaving the file as it
   * was, when the new one cannot be written.
   */
  replace(messages: readonly AgentMessage[], records: readonly TranscriptRecord[] = []): void {
    const text = [...messages.map((message) => this.lineOf(message)), ...records.map((record) => this.recordLineOf(record))].join("");
    const next = `${this.path}.replacing`;
    try {
      writeWholeFile(next, text, this.options.fsync === true);
      renameSync(next, this.path);
    } catch (error) {
      try {
        rmSync(next, { force: true });
      } catch {
        // Not a file this store wrote (a directory in its way): left as it is, and the error
        // that says why the replace failed is the one thrown.
      }
      throw new Error(`${this.path}: could not replace the transcript: ${errorText(error)}`, { cause: error });
    }
    // The open descriptor, if any, still points at the old file.
    this.releaseDescriptor();
    this.size = Buffer.byteLength(text, "utf8");
    this.checked = true;
  }

  close(): void {
    this.pool.forget(this);
    this.releaseDescriptor();
  }

  /** Closes the file until the next write (the pool needs room). */
  releaseDescriptor(): void {
    if (this.descriptor !== undefined) {
      const descriptor = this.descriptor;
      this.descriptor = undefined;
      closeSync(descriptor);
    }
  }

  private get pool(): DescriptorPool {
    return this.options.descriptors ?? sharedDescriptorPool;
  }

  private open(): number {
    if (this.descriptor === undefined) {
      const descriptor = openSync(this.path, APPEND_NONBLOCKING, 0o666);
      const stats = fstatSync(descriptor);
      if (!stats.isFile()) {
        closeSync(descriptor);
        throw new Error(`${this.path}: ${notRegularFileText(stats.isDirectory())}`);
      }
      const size = stats.size;
      // A file this store ended cleanly and nobody changed since needs no second look at its last line.
      if (!this.checked || size !== this.size) {
        try {
          this.endLastLine(descriptor);
        } catch (error) {
          closeSync(descriptor);
          throw error;
        }
      }
      this.checked = true;
      this.descriptor = descriptor;
      this.size = fstatSync(descriptor).size;
    }
    this.pool.use(this);
    return this.descriptor;
  }

  /**
   * Makes sure the next message starts on a line of its own: a last line without its newline is
   * ended when it is a whole message (load() returned it), else cut off (torn mid-write).
   */
  private endLastLine(descriptor: number): void {
    const size = fstatSync(descriptor).size;
    if (size === 0) return;
    const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
    // Read backwards until the last newline (or the file's start): a torn line may be longer
    // than one chunk, and cutting inside it would glue the next message onto its start.
    let end = size;
    while (end > 0) {
      const length = Math.min(chunk.length, end);
      const start = end - length;
      readSync(descriptor, chunk, 0, length, start);
      if (end === size && chunk[length - 1] === 0x0a) return;
      const lastNewline = chunk.subarray(0, length).lastIndexOf(0x0a);
      if (lastNewline !== -1) {
        this.endOrCut(descriptor, start + lastNewline + 1, size);
        return;
      }
      end = start;
    }
    this.endOrCut(descriptor, 0, size);
  }

  private endOrCut(descriptor: number, lineStart: number, size: number): void {
    const line = Buffer.alloc(size - lineStart);
    readSync(descriptor, line, 0, line.length, lineStart);
    try {
      JSON.parse(line.toString("utf8"));
      writeSync(descriptor, "\n");
    } catch {
      ftruncateSync(descriptor, lineStart);
    }
  }

  private warn(message: string): void {
    warnerOf(this.options.onWarning)(message);
  }
}

/** How `storedTranscriptOf` names an entry in its warnings. */
export interface StoredEntryNames {
  /** Where entry `index` is (`file:line`, `key[index]`). */
  where: (index: number) => string;
  /** What a skipped entry that is not JSON was. */
  notJson: (index: number) => string;
}

/**
 * Stored entries (JSONL lines, the elements of a Redis list) as messages, the records of the
 * last batch, and the settings records merged: a blank entry is passed over; one that is not
 * JSON, or a record rxagent does not write, is skipped with a warning that says where it was.
 */
export function storedTranscriptOf(entries: readonly string[], names: StoredEntryNames, warn: (message: string) => void): StoredTranscript {
  const messages: AgentMessage[] = [];
  let records: TranscriptRecord[] = [];
  let settings: StoredSettings | undefined;
  entries.forEach((entry, index) => {
    if (entry.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(entry);
    } catch {
      return warn(`${names.where(index)}: skipped ${names.notJson(index)}.`);
    }
    if (!isRecordLine(value)) {
      // A line edited by hand, or a key another program wrote, must not put a non-message (or one
      // nested past what the loop walks) into a transcript every later step recurses into.
      const problem = problemOfMessage(value);
      if (problem !== undefined) return warn(`${names.where(index)}: skipped a line that is not a message: it ${problem}.`);
      messages.push(value as AgentMessage);
      // Records describe the last assistant message's batch: any other message but its results closes it.
      if (roleOf(value as AgentMessage) !== "toolResult") records = [];
      return;
    }
    const record = nestsDeeperThan(value, MAX_JSON_DEPTH) ? undefined : checkedRecord(value.rxagent);
    // Settings hold for the whole session, past any batch: merged apart from the batch's records.
    if (record?.type === "settings") settings = { ...settings, ...record.settings };
    else if (record) records.push(record);
    else warn(`${names.where(index)}: skipped a record that is not one rxagent writes: ${entry.slice(0, 200)}`);
  });
  return settings ? { messages, records, settings } : { messages, records };
}

/** A line the store wrote for a record: an object with an `rxagent` field and no `role`. */
function isRecordLine(value: unknown): value is { rxagent: unknown } {
  return typeof value === "object" && value !== null && !("role" in value) && "rxagent" in value;
}

/** The record if it has the fields its type needs (a line edited by hand may not). */
function checkedRecord(value: unknown): TranscriptRecord | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Partial<Record<string, unknown>>;
  const isText = (field: unknown): field is string => typeof field === "string" && field !== "";
  switch (record.type) {
    case "approval_pending": {
      const approval = record.approval as Partial<Record<string, unknown>> | undefined;
      const valid = typeof approval === "object" && approval !== null && isText(approval.toolCallId) && isText(approval.toolName) && typeof approval.since === "number";
      return valid ? (value as TranscriptRecord) : undefined;
    }
    case "approval_settled":
      return isText(record.toolCallId) ? (value as TranscriptRecord) : undefined;
    case "tool_result": {
      const message = record.message as Partial<Record<string, unknown>> | undefined;
      const valid = typeof message === "object" && message !== null && message.role === "toolResult" && isText(message.toolCallId) && Array.isArray(message.content);
      return valid ? (value as TranscriptRecord) : undefined;
    }
    case "settings":
      return isStoredSettings(record.settings) ? (value as TranscriptRecord) : undefined;
    default:
      return undefined;
  }
}

/** Whether `value` has the shape of `StoredSettings`: each field present has its type. */
function isStoredSettings(value: unknown): value is StoredSettings {
  if (typeof value !== "object" || value === null) return false;
  const settings = value as Partial<Record<string, unknown>>;
  const model = settings.model as Partial<Record<string, unknown>> | undefined;
  return (
    (settings.systemPrompt === undefined || typeof settings.systemPrompt === "string") &&
    (settings.thinkingLevel === undefined || THINKING_LEVELS.includes(settings.thinkingLevel as ThinkingLevel)) &&
    (model === undefined || (typeof model === "object" && model !== null && typeof model.provider === "string" && typeof model.id === "string")) &&
    (settings.tools === undefined || (Array.isArray(settings.tools) && settings.tools.every((name) => typeof name === "string")))
  );
}

// Why O_NONBLOCK on every open: a FIFO where the transcript should be waits for a writer (or a
// reader) forever, on the main thread or on one of libuv's four pool threads; four such sessions
// stalled every file operation of the process, and even its exit. Non-blocking, the open returns
// at once, and `fstat` refuses what is not a regular file before any read or write. (Windows has
// no O_NONBLOCK, and no such wait when opening a named pipe.)
const NONBLOCKING = constants.O_NONBLOCK ?? 0;
const APPEND_NONBLOCKING = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | NONBLOCKING;
const WRITE_NONBLOCKING = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | NONBLOCKING;

/** The transcript file's text, or `undefined` when there is no file yet; throws for a folder, a FIFO, a device or a socket. */
async function readTranscriptText(path: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | NONBLOCKING);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new Error(`${path}: ${notRegularFileText(stats.isDirectory())}`);
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/** Writes `text` as the whole file at `path`, made or emptied first, as `writeFileSync` does, without waiting on a FIFO. */
function writeWholeFile(path: string, text: string, flush: boolean): void {
  const descriptor = openSync(path, WRITE_NONBLOCKING, 0o666);
  try {
    const stats = fstatSync(descriptor);
    if (!stats.isFile()) throw new Error(`${path}: ${notRegularFileText(stats.isDirectory())}`);
    writeFileSync(descriptor, text, "utf8");
    if (flush) fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

function notRegularFileText(isFolder: boolean): string {
  return `${isFolder ? "a folder" : "not a regular file (a FIFO, a device or a socket)"} is where the transcript should be; a transcript is a file of JSON lines.`;
}
