import { constants, type Dirent } from "node:fs";
import { type FileHandle, lstat, open, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Type } from "@sinclair/typebox";
import { asyncScheduler, concat, defer, map, type Observable, of, type SchedulerLike, timer } from "rxjs";
import { defineTool } from "../tools/define-tool.js";
import type { AgentTool, AgentToolResult, Model } from "../types.js";
import { evaluate, format } from "./calculator.js";
import { researcherTool } from "./researcher.js";
import { Sandbox } from "./sandbox.js";

export interface DemoToolsOptions {
  /** The only folder `list_files`, `read_file` and `write_file` may see. Default: the current directory. */
  root?: string;
  /** Paces the calculator's progress and gives the clock its time. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Time between the calculator's progress steps, so a spinner has something to show. Default 150. */
  stepDelay?: number;
  /** The clock's default IANA time zone. Default: the machine's. */
  timeZone?: string;
  /** The `researcher` sub-agent's model. Default: an offline demo model of its own. */
  researcherModel?: Model;
  /** Time between the researcher's demo model's tokens. Default 25; 0 is synchronous. */
  researcherDelay?: number;
}

/** `calculator` details: the steps so far, then the value. */
export interface CalculatorDetails {
  expression: string;
  steps: string[];
  value?: number;
}

/** `clock` details: the instant in several forms. */
export interface ClockDetails {
  iso: string;
  epochMs: number;
  timeZone: string;
  time: string;
  date: string;
}

/** One entry of a listed folder. */
export interface FileEntry {
  name: string;
  kind: "file" | "directory" | "symlink" | "other";
  /** Bytes, for files. */
  size?: number;
}

/** `list_files` details: the folder (relative to the sandbox root) and its entries. */
export interface ListFilesDetails {
  path: string;
  entries: FileEntry[];
  /** Entries left out beyond the limit. */
  omitted: number;
}

/** `write_file` details: the file it created. */
export interface WriteFileDetails {
  path: string;
  bytes: number;
}

/** `read_file` details: what was read and whether it was cut. */
export interface ReadFileDetails {
  path: string;
  /** The file's size. */
  bytes: number;
  /** Lines in the text read (up to `maxBytes`). */
  lines: number;
  truncated: boolean;
}

const maxEntries = 200;
const defaultMaxBytes = 16_000;

/**
 * The demo's tools: a calculator, a clock, two read-only file tools sandboxed to one folder, and
 * one that creates a file there, only once the user approves (`needsApproval`). A real model gets
 * the same tools, so both paths show the same loop.
 *
 * @example new Agent({ model: demoModel(), tools: demoTools({ root: process.cwd() }) })
 */
export function demoTools(options: DemoToolsOptions = {}): AgentTool[] {
  const scheduler = options.scheduler ?? asyncScheduler;
  const sandbox = new Sandbox(options.root ?? process.cwd());
  const listFiles = listFilesTool(sandbox);
  const readFile = readFileTool(sandbox);
  const researcher = researcherTool({ tools: [listFiles, readFile], scheduler, ...(options.researcherModel ? { model: options.researcherModel } : {}), ...(options.researcherDelay === undefined ? {} : { tokenDelay: options.researcherDelay }) });
  return [calculatorTool(scheduler, options.stepDelay ?? 150), clockTool(scheduler, options.timeZone), listFiles, readFile, writeFileTool(sandbox), researcher];
}

function calculatorTool(scheduler: SchedulerLike, stepDelay: number): AgentTool {
  return defineTool({
    name: "calculator",
    label: "Calculator",
    description:
      "Evaluates an arithmetic expression exactly. Supports numbers, + - * / % ^, parentheses, unary minus, " +
      "sqrt, cbrt, abs, round, floor, ceil, sin, cos, tan, ln, log (base 10), log2, exp, min, max, pow, pi, e.",
    parameters: Type.Object({ expression: Type.String({ description: 'For example "(12 + 3) * sqrt(16)"' }) }),
    // An Observable body: each value before the last is progress, which the UI shows live.
    execute: (_toolCallId, { expression }): Observable<AgentToolResult<CalculatorDetails>> =>
      defer(() => {
        const { value, steps } = evaluate(expression);
        const progress = steps.map((_step, index) => {
          const shown = steps.slice(0, index + 1);
          return { content: [{ type: "text" as const, text: shown[index] ?? "" }], details: { expression, steps: shown } };
        });
        const result = { content: [{ type: "text" as const, text: `${expression} = ${format(value)}` }], details: { expression, steps, value } };
        const all = [...progress, result];
        if (stepDelay <= 0) return of(...all);
        return concat(...all.map((item) => timer(stepDelay, scheduler).pipe(map(() => item))));
      }),
  });
}

function clockTool(scheduler: SchedulerLike, defaultZone: string | undefined): AgentTool {
  // Resolved and built now, not in the first call: a process's first Intl call loads ICU's
  // time-zone data synchronously (30 ms on a quiet machine, 0.5 s at load 20). Inside a run that
  // stall held a `serve --redis` process past its 1.5 s lease under load, and another process took
  // the run over (serve-redis.test.ts, 2026-12-02: in both failures seen, the lease was lost at
  // the clock's first call).
  const zone = defaultZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  let own: ClockFormat | undefined;
  try {
    own = clockFormat(zone);
  } catch {
    // An unknown default zone: each call's error result says so, as it did before.
  }
  return defineTool({
    name: "clock",
    label: "Clock",
    description: "Tells the current date and time, in the machine's time zone or a given IANA time zone.",
    parameters: Type.Object({ timeZone: Type.Optional(Type.String({ description: 'IANA name, e.g. "Europe/Paris"' })) }),
    execute: (_toolCallId, { timeZone }): AgentToolResult<ClockDetails> => {
      const epochMs = scheduler.now();
      const chosen = timeZone ?? zone;
      // An unknown zone makes Intl throw a RangeError, which becomes an error result.
      const { time, date } = (chosen === zone && own ? own : clockFormat(chosen))(epochMs);
      const details = { iso: new Date(epochMs).toISOString(), epochMs, timeZone: chosen, time, date };
      return { content: [{ type: "text", text: `It is ${time} on ${date} (${chosen}).` }], details };
    },
  });
}

type ClockFormat = (epochMs: number) => { time: string; date: string };

/** The clock's time and date formats for one zone; throws a RangeError for a zone Intl does not know. */
function clockFormat(zone: string): ClockFormat {
  const time = new Intl.DateTimeFormat("en-GB", { timeZone: zone, timeStyle: "medium" });
  const date = new Intl.DateTimeFormat("en-GB", { timeZone: zone, dateStyle: "full" });
  return (epochMs) => ({ time: time.format(epochMs), date: date.format(epochMs) });
}

function listFilesTool(sandbox: Sandbox): AgentTool {
  return defineTool({
    name: "list_files",
    label: "List files",
    description: `Lists a folder inside ${sandbox.root} (paths are relative to it; default: that folder itself).`,
    parameters: Type.Object({ path: Type.Optional(Type.String({ description: 'Relative folder, e.g. "src"' })) }),
    execute: async (_toolCallId, args): Promise<AgentToolResult<ListFilesDetails>> => {
      const folder = await sandbox.resolve(args.path ?? ".");
      const dirents = await readdir(folder, { withFileTypes: true });
      const entries = await Promise.all(dirents.map((dirent) => describeEntry(folder, dirent)));
      entries.sort((left, right) => Number(right.kind === "directory") - Number(left.kind === "directory") || left.name.localeCompare(right.name));
      const shown = entries.slice(0, maxEntries);
      const relative = sandbox.relative(folder);
      const lines = shown.map((entry) => (entry.kind === "directory" ? `${entry.name}/` : entry.size === undefined ? entry.name : `${entry.name} (${entry.size} bytes)`));
      const omitted = entries.length - shown.length;
      const text = `${relative}: ${entries.length} entries\n${lines.join("\n")}${omitted > 0 ? `\n… and ${omitted} more` : ""}`;
      return { content: [{ type: "text", text }], details: { path: relative, entries: shown, omitted } };
    },
  });
}

function readFileTool(sandbox: Sandbox): AgentTool {
  return defineTool({
    name: "read_file",
    label: "Read file",
    description: `Reads a text file inside ${sandbox.root} (paths are relative to it).`,
    parameters: Type.Object({
      path: Type.String({ description: 'Relative path, e.g. "README.md"' }),
      maxBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: `Default ${defaultMaxBytes}` })),
    }),
    execute: async (_toolCallId, args, { signal }): Promise<AgentToolResult<ReadFileDetails>> => {
      const file = await sandbox.resolve(args.path);
      const limit = args.maxBytes ?? defaultMaxBytes;
      const { buffer, size } = await readStart(file, args.path, limit, signal);
      if (buffer.includes(0)) throw new Error(`"${args.path}" looks like a binary file; only text files can be read.`);
      const truncated = size > buffer.length;
      const text = buffer.toString("utf8");
      const details = { path: sandbox.relative(file), bytes: size, lines: countLines(text), truncated };
      return { content: [{ type: "text", text: truncated ? `${text}\n… (cut at ${limit} of ${size} bytes)` : text }], details };
    },
  });
}

function writeFileTool(sandbox: Sandbox): AgentTool {
  return defineTool({
    name: "write_file",
    label: "Write file",
    description: `Creates a new text file inside ${sandbox.root} (paths are relative to it); never replaces an existing file. The user approves each call.`,
    parameters: Type.Object({
      path: Type.String({ description: 'Relative path of a new file, e.g. "notes.txt"' }),
      content: Type.String({ description: "The text to write" }),
    }),
    // It changes the user's folder, so a person says yes first: the page shows Approve / Deny, the CLI asks y / n.
    needsApproval: true,
    execute: async (_toolCallId, args): Promise<AgentToolResult<WriteFileDetails>> => {
      const file = await sandbox.resolveNew(args.path);
      // "wx": created here or refused, so an existing file (or a symlink planted in its place) is never written through.
      await writeFile(file, args.content, { flag: "wx" }).catch((error: NodeJS.ErrnoException) => {
        throw error.code === "EEXIST" ? new Error(`"${args.path}" already exists; write_file only creates new files.`) : error;
      });
      const details = { path: sandbox.relative(file), bytes: Buffer.byteLength(args.content) };
      return { content: [{ type: "text", text: `Wrote ${details.bytes} bytes to ${details.path}.` }], details };
    },
  });
}

/**
 * The first `limit` bytes of a regular file, and its size. Why open, `fstat`, then read with a
 * length: reading the whole file before cutting held 1.5 GiB per call of a big file, and opening a
 * FIFO without `O_NONBLOCK` waits for a writer forever on one of libuv's four pool threads, so four
 * of them stalled every file operation of the process (issue 27, rows 10 and 11). With
 * `O_NONBLOCK` the open returns at once, and `fstat` refuses what is not a regular file before any read.
 */
async function readStart(file: string, shown: string, limit: number, signal: AbortSignal): Promise<{ buffer: Buffer; size: number }> {
  // O_NONBLOCK does not exist on Windows, where opening a named pipe does not wait for a writer anyway.
  const handle = await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new Error(`"${shown}" is a folder; list_files shows what it holds.`);
    if (!stats.isFile()) throw new Error(`"${shown}" is not a regular file (a FIFO, a device or a socket); only regular files can be read.`);
    const buffer = Buffer.alloc(Math.min(limit, stats.size));
    const filled = await fill(handle, buffer, signal);
    return { buffer: buffer.subarray(0, filled), size: stats.size };
  } finally {
    await handle.close();
  }
}

/** Reads into `buffer` from the file's start until it is full or the file ends (a file may shrink meanwhile). */
async function fill(handle: FileHandle, buffer: Buffer, signal: AbortSignal): Promise<number> {
  let filled = 0;
  while (filled < buffer.length) {
    signal.throwIfAborted();
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}

async function describeEntry(folder: string, dirent: Dirent): Promise<FileEntry> {
  if (dirent.isDirectory()) return { name: dirent.name, kind: "directory" };
  if (dirent.isSymbolicLink()) return { name: dirent.name, kind: "symlink" };
  if (!dirent.isFile()) return { name: dirent.name, kind: "other" };
  const stats = await lstat(path.join(folder, dirent.name)).catch(() => undefined);
  return stats === undefined ? { name: dirent.name, kind: "file" } : { name: dirent.name, kind: "file", size: stats.size };
}

function countLines(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}
