/**
 * JsonlTranscriptStore when the disk does not take a whole line at once: `writeSync` is wrapped
 * (this file only) so a test can make it write less than asked, or fail part way, as a nearly
 * full disk does.
 */
import * as fs from "node:fs";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { JsonlTranscriptStore } from "../../src/server/index.js";
import type { AgentMessage } from "../../src/types.js";

vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>();
  return { ...actual, writeSync: vi.fn(actual.writeSync) };
});

const realWriteSync = (await vi.importActual<typeof import("node:fs")>("node:fs")).writeSync;
const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 0 });

function temporaryFile(): string {
  return join(mkdtempSync(join(tmpdir(), "rxagent-store-")), "transcript.jsonl");
}

afterEach(() => {
  vi.mocked(fs.writeSync).mockImplementation(realWriteSync as never);
});

describe("JsonlTranscriptStore on a disk that takes less than a line at a time", () => {
  it("writes a line whole when writeSync writes only part of what it is given each time", async () => {
    const path = temporaryFile();
    vi.mocked(fs.writeSync).mockImplementation(((descriptor: number, data: Buffer | string, offset?: number, length?: number) => {
      const bytes = typeof data === "string" ? Buffer.from(data) : data;
      const start = typeof data === "string" ? 0 : (offset ?? 0);
      return realWriteSync(descriptor, bytes, start, Math.min(typeof data === "string" ? bytes.length : (length ?? bytes.length - start), 7));
    }) as never);
    const store = new JsonlTranscriptStore(path);
    store.append(user("first message"));
    store.append(user("second message"));
    store.close();
    expect(readFileSync(path, "utf8")).toBe(`${JSON.stringify(user("first message"))}\n${JSON.stringify(user("second message"))}\n`);
  });

  it("fails loudly when the disk fills mid-line, leaves the file loadable, and the next append starts clean", async () => {
    const path = temporaryFile();
    const store = new JsonlTranscriptStore(path);
    store.append(user("kept"));
    let calls = 0;
    vi.mocked(fs.writeSync).mockImplementation(((descriptor: number, data: Buffer | string, offset?: number, length?: number) => {
      calls += 1;
      const bytes = typeof data === "string" ? Buffer.from(data) : data;
      const start = typeof data === "string" ? 0 : (offset ?? 0);
      if (calls === 1) return realWriteSync(descriptor, bytes, start, Math.min(typeof data === "string" ? bytes.length : (length ?? bytes.length - start), 10));
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    }) as never);
    expect(() => store.append(user("lost to a full disk"))).toThrow(`${path}: could not append a message: ENOSPC: no space left on device, write`);
    vi.mocked(fs.writeSync).mockImplementation(realWriteSync as never);
    expect(readFileSync(path, "utf8")).toBe(`${JSON.stringify(user("kept"))}\n`);
    store.append(user("after"));
    store.close();
    const warnings: string[] = [];
    expect(await new JsonlTranscriptStore(path, { onWarning: (warning) => warnings.push(warning) }).load()).toStrictEqual([user("kept"), user("after")]);
    expect(warnings).toStrictEqual([]);
  });
});
