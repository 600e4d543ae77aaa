import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { from, isObservable, lastValueFrom, type Observable } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectIntents } from "../../src/demo/demo-intents.js";
import { demoTools } from "../../src/demo/demo-tools.js";
import type { AgentTool, AgentToolResult } from "../../src/types.js";

let root: string;
let outside: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rxagent-write-file-"));
  outside = mkdtempSync(join(tmpdir(), "rxagent-write-file-outside-"));
  mkdirSync(join(root, "sub"));
  writeFileSync(join(root, "taken.txt"), "keep me");
  symlinkSync(join(outside, "planted.txt"), join(root, "planted.txt"));
  symlinkSync(outside, join(root, "away"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const writeFileTool = () => demoTools({ root, stepDelay: 0 }).find((tool) => tool.name === "write_file") as AgentTool;

/** The tool's result, or the message of its error (which the loop turns into an error result). */
async function write(args: { path: string; content: string }): Promise<AgentToolResult | string> {
  try {
    const output = writeFileTool().execute("call_1", args as never, { signal: new AbortController().signal, update: () => undefined });
    return await lastValueFrom(isObservable(output) ? (output as Observable<AgentToolResult>) : from(Promise.resolve(output)));
  } catch (error) {
    return (error as Error).message;
  }
}

describe("write_file, the demo's tool that needs approval", () => {
  it("asks first, and the demo model understands a quoted text to write", () => {
    expect(writeFileTool().needsApproval).toBe(true);
    expect(detectIntents('write "2+2 is 4" to notes.txt and what is 3*4').toolCalls).toStrictEqual([
      { name: "write_file", arguments: { path: "notes.txt", content: "2+2 is 4" } },
      { name: "calculator", arguments: { expression: "3*4" } },
    ]);
  });

  it("creates a new file inside the sandbox, also in a folder", async () => {
    expect(await write({ path: "sub/new.txt", content: "héllo" })).toStrictEqual({
      content: [{ type: "text", text: "Wrote 6 bytes to sub/new.txt." }],
      details: { path: "sub/new.txt", bytes: 6 },
    });
    expect(readFileSync(join(root, "sub/new.txt"), "utf8")).toBe("héllo");
  });

  it("never replaces a file, never writes through a symlink, never leaves the sandbox", async () => {
    expect(await write({ path: "taken.txt", content: "x" })).toBe('"taken.txt" already exists; write_file only creates new files.');
    expect(readFileSync(join(root, "taken.txt"), "utf8")).toBe("keep me");
    expect(await write({ path: "planted.txt", content: "x" })).toBe('"planted.txt" already exists; write_file only creates new files.');
    expect(await write({ path: "../escape.txt", content: "x" })).toMatch(/^"\.\." is outside the sandbox folder/);
    expect(await write({ path: "away/escape.txt", content: "x" })).toMatch(/^"away" is outside the sandbox folder/);
    expect(await write({ path: "missing/new.txt", content: "x" })).toMatch(/^"missing" does not exist in /);
    expect(await write({ path: "sub/", content: "x" })).toBe('"sub/" is not a file name; give a path such as "notes.txt".');
    expect(await write({ path: "  ", content: "x" })).toBe('"  " is not a file name; give a path such as "notes.txt".');
  });
});
