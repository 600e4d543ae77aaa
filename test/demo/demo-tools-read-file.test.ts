import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { from, isObservable, lastValueFrom, type Observable } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoTools } from "../../src/demo/demo-tools.js";
import type { AgentTool, AgentToolResult } from "../../src/types.js";

// Issue 27, rows 10 and 11: FIFOs in the root blocked libuv's pool threads forever, and a big file
// was read whole before being cut to maxBytes.
let root: string;
const bigSize = 1.5 * 1024 ** 3;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rxagent-read-file-"));
  for (let index = 0; index < 4; index++) execFileSync("mkfifo", [join(root, `data${index}.txt`)]);
  writeFileSync(join(root, "notes.txt"), "first line\nsecond line\n");
  // Sparse: 1.5 GiB of size, no disk.
  writeFileSync(join(root, "big.txt"), "");
  truncateSync(join(root, "big.txt"), bigSize);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const readFileTool = () => demoTools({ root, stepDelay: 0 }).find((tool) => tool.name === "read_file") as AgentTool;

/** The tool's result, or the message of its error (which the loop turns into an error result). */
async function read(args: { path: string; maxBytes?: number }): Promise<AgentToolResult | string> {
  try {
    const output = readFileTool().execute("call_1", args as never, { signal: new AbortController().signal, update: () => undefined });
    return await lastValueFrom(isObservable(output) ? (output as Observable<AgentToolResult>) : from(Promise.resolve(output)));
  } catch (error) {
    return (error as Error).message;
  }
}

describe("read_file bounds", () => {
  it("refuses four FIFOs at once with a clear message, and the thread pool stays free", async () => {
    const results = await Promise.all([0, 1, 2, 3].map((index) => read({ path: `data${index}.txt` })));
    expect(results).toStrictEqual([0, 1, 2, 3].map((index) => `"data${index}.txt" is not a regular file (a FIFO, a device or a socket); only regular files can be read.`));
    // Every pool thread would still be waiting for a writer if an open had blocked: this read would never end.
    expect(await readFile(join(root, "notes.txt"), "utf8")).toBe("first line\nsecond line\n");
    expect(await read({ path: "notes.txt" })).toStrictEqual({
      content: [{ type: "text", text: "first line\nsecond line\n" }],
      details: { path: "notes.txt", bytes: 23, lines: 2, truncated: false },
    });
  });

  it("reads at most maxBytes of a 1.5 GiB file, three times, with memory far below its size", async () => {
    const before = process.memoryUsage().rss;
    for (let time = 0; time < 3; time++) {
      const result = await read({ path: "big.txt", maxBytes: 1000 });
      // A sparse file reads as zero bytes: the binary check answers, after reading 1000 bytes only.
      expect(result).toBe('"big.txt" looks like a binary file; only text files can be read.');
    }
    const growth = process.memoryUsage().rss - before;
    expect(growth).toBeLessThan(64 * 1024 ** 2);
  });

  it("reports the file's size and cuts at maxBytes", async () => {
    writeFileSync(join(root, "big-text.txt"), "abcdefghij".repeat(1000));
    const result = await read({ path: "big-text.txt", maxBytes: 25 });
    expect(result).toStrictEqual({
      content: [{ type: "text", text: "abcdefghijabcdefghijabcde\n… (cut at 25 of 10000 bytes)" }],
      details: { path: "big-text.txt", bytes: 10_000, lines: 1, truncated: true },
    });
  });

  it("still refuses a folder with its own message", async () => {
    execFileSync("mkdir", ["-p", join(root, "folder")]);
    expect(await read({ path: "folder" })).toBe('"folder" is a folder; list_files shows what it holds.');
  });
});
