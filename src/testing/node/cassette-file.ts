import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
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

/** Reads a cassette file: a JSON document or the JSON Lines of `cassetteFileSink`. */
export function readCassette(path: string): Cassette {
  return parseCassette(readFileSync(path, "utf8"));
}

/**
 * Writes a cassette as JSON Lines (the format `cassetteFileSink` streams), which keeps a
 * committed cassette diffable line by line.
 */
export function writeCassette(path: string, cassette: Cassette): void {
  writeFileSync(path, recordsOfCassette(cassette).map((record) => `${JSON.stringify(record)}\n`).join(""));
}
