import { closeSync, fstatSync, openSync, readSync, writeFileSync, writeSync } from "node:fs";
import type { Cassette, CassetteRecord, CassetteSink } from "../cassette.js";
import { parseCassette, recordsOfCassette } from "../cassette.js";

/** A sink that appends records to a file; `close` releases the file. */
export interface CassetteFileSink extends CassetteSink {
  readonly path: string;
  close(): void;
}

/**
 * Writes a recording to `path` as JSON Lines, one record per line as it is made. Each line is
 * written synchronously before the recorded event goes on, so a process that crashes or is
 * killed leaves a cassette with every event it had seen (`readCassette` reads it).
 *
 * Contract: creates or truncates the file at once; a write failure throws from `write`.
 * @example recordingModel(model, { sink: cassetteFileSink("bug.cassette.jsonl") })
 */
export function cassetteFileSink(path: string): CassetteFileSink {
  let descriptor: number | undefined = openSync(path, "w");
  return {
    path,
    write(record: CassetteRecord) {
      if (descriptor === undefined) throw new Error(`cassetteFileSink: ${path} is closed.`);
      writeSync(descriptor, `${JSON.stringify(record)}\n`);
    },
    close() {
      if (descriptor !== undefined) closeSync(descriptor);
      descriptor = undefined;
    },
  };
}

/** The most a cassette may hold by default (`readCassette`'s `maxBytes`): 256 MiB. */
export const MAX_CASSETTE_BYTES = 256 * 1024 * 1024;

/**
 * Reads a cassette file: a JSON document or the JSON Lines of `cassetteFileSink`. A pipe works
 * too (`rxagent replay /dev/stdin`); past `maxBytes` reading stops with an error that says so.
 * Why a bound: a device such as /dev/zero never ends, and reading it whole filled the memory
 * until the process died.
 */
export function readCassette(path: string, { maxBytes = MAX_CASSETTE_BYTES }: { maxBytes?: number } = {}): Cassette {
  return parseCassette(readBoundedText(path, maxBytes));
}

function readBoundedText(path: string, maxBytes: number): string {
  const descriptor = openSync(path, "r");
  try {
    const stats = fstatSync(descriptor);
    if (stats.isDirectory()) throw new Error(`${path} is a folder, not a cassette file.`);
    const tooLarge = () => new Error(`${path} holds more than ${maxBytes} bytes, more than a cassette may (maxBytes).`);
    if (stats.size > maxBytes) throw tooLarge();
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const read = readSync(descriptor, chunk, 0, chunk.length, null);
      if (read === 0) break;
      total += read;
      if (total > maxBytes) throw tooLarge();
      chunks.push(chunk.subarray(0, read));
    }
    return Buffer.concat(chunks, total).toString("utf8");
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Writes a cassette as JSON Lines (the format `cassetteFileSink` streams), which keeps a
 * committed cassette diffable line by line.
 */
export function writeCassette(path: string, cassette: Cassette): void {
  writeFileSync(path, recordsOfCassette(cassette).map((record) => `${JSON.stringify(record)}\n`).join(""));
}
