import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { AgentMessage, TranscriptStore } from "../types.js";

export interface JsonlTranscriptStoreOptions {
  /** Also `fsync` after each message, for durability against power loss, not only crashes. */
  fsync?: boolean;
  /** Told about lines that could not be read. Default: `console.warn`. */
  onWarning?: (message: string) => void;
}

/**
 * A transcript as a JSON Lines file: one message per line, appended as each message ends.
 *
 * Why synchronous writes: a message must be on disk, in order, before the loop moves on, so a
 * process killed mid-run loses nothing that had ended. A torn last line (the process died
 * mid-write) is skipped with a warning and cut off before the next append.
 */
export class JsonlTranscriptStore implements TranscriptStore {
  private descriptor: number | undefined;

  constructor(
    readonly path: string,
    private readonly options: JsonlTranscriptStoreOptions = {},
  ) {}

  async load(): Promise<AgentMessage[]> {
    if (!existsSync(this.path)) return [];
    const text = await readFile(this.path, "utf8");
    const messages: AgentMessage[] = [];
    const lines = text.split("\n");
    lines.forEach((line, index) => {
      if (line.trim() === "") return;
      try {
        messages.push(JSON.parse(line) as AgentMessage);
      } catch {
        const torn = index === lines.length - 1;
        this.warn(
          `${this.path}:${index + 1}: skipped a line that is not valid JSON${torn ? " (torn last line, cut off)" : ""}.`,
        );
      }
    });
    return messages;
  }

  append(message: AgentMessage): void {
    const descriptor = this.open();
    writeSync(descriptor, `${JSON.stringify(message)}\n`);
    if (this.options.fsync) fsyncSync(descriptor);
  }

  clear(): void {
    ftruncateSync(this.open(), 0);
  }

  close(): void {
    if (this.descriptor !== undefined) {
      closeSync(this.descriptor);
      this.descriptor = undefined;
    }
  }

  private open(): number {
    if (this.descriptor === undefined) {
      this.descriptor = openSync(this.path, "a+");
      this.cutTornTail(this.descriptor);
    }
    return this.descriptor;
  }

  /** Cuts a last line that has no newline, so the next message starts on a line of its own. */
  private cutTornTail(descriptor: number): void {
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
        ftruncateSync(descriptor, start + lastNewline + 1);
        return;
      }
      end = start;
    }
    ftruncateSync(descriptor, 0);
  }

  private warn(message: string): void {
    (this.options.onWarning ?? ((text: string) => console.warn(`rxagent: ${text}`)))(message);
  }
}
