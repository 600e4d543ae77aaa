import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DescriptorPool } from "../../src/server/index.js";

const sessions = 2_000;
const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** Runs the child under `ulimit -n 256` and resolves with its exit code and output. */
function runChild(directory: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn("bash", ["-c", `ulimit -n 256 && exec "${process.execPath}" --import tsx test/server/descriptor-limit-child.ts "$0" ${sessions}`, directory], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

describe("JSONL stores under a descriptor limit (issue 27, row 6)", () => {
  // Before the pool each store kept its file open for good: under 256 descriptors appends failed
  // with EMFILE from about session 240 on, and those transcripts were lost.
  it(`${sessions} sessions created and left under ulimit -n 256 keep every transcript whole`, async () => {
    const directory = mkdtempSync(join(tmpdir(), "rxagent-descriptors-"));
    directories.push(directory);
    const { code, stdout, stderr } = await runChild(directory);
    expect(stderr).not.toMatch(/EMFILE/);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toStrictEqual({ completed: sessions, agents: sessions, warnings: [] });
    const incomplete: number[] = [];
    for (let index = 0; index < sessions; index++) {
      const lines = readFileSync(join(directory, `session-${index}.jsonl`), "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as { role: string; content: unknown });
      const texts = lines.map((message) => `${message.role}: ${typeof message.content === "string" ? message.content : JSON.stringify(message.content)}`);
      const whole = texts.length === 2 && texts[0] === `user: Question ${index}` && texts[1]!.includes(`Answer ${index}`);
      if (!whole) incomplete.push(index);
    }
    expect(incomplete).toStrictEqual([]);
  }, 120_000);

  it("closes the least recently used holder's descriptor beyond its limit", () => {
    const pool = new DescriptorPool(2);
    const released: string[] = [];
    const holder = (name: string) => ({ releaseDescriptor: () => released.push(name) });
    const [first, second, third] = [holder("first"), holder("second"), holder("third")];
    pool.use(first);
    pool.use(second);
    pool.use(first);
    pool.use(third);
    expect(released).toStrictEqual(["second"]);
    pool.forget(first);
    expect(pool.size).toBe(1);
    expect(() => new DescriptorPool(0)).toThrow(/positive integer, got 0/);
  });
});
