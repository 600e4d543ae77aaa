import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastValueFrom, toArray } from "rxjs";
import { Agent } from "../../src/index.js";
import { JsonlTranscriptStore } from "../../src/server/index.js";
import { assertEventGrammar, scriptedModel } from "../../src/testing/index.js";

function runUntilReadyThenKill(path: string): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/server/crash-child.ts", path], { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("READY")) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) => resolve(signal));
  });
}

describe("crash recovery", () => {
  it("keeps every ended message when the process is killed mid-tool, and continue() repairs and resumes", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rxagent-crash-")), "transcript.jsonl");
    expect(await runUntilReadyThenKill(path)).toBe("SIGKILL");

    const lines = readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { role: string });
    expect(lines.map((message) => message.role)).toStrictEqual(["user", "assistant"]);

    const model = scriptedModel(["The job was interrupted; shall I retry?"]);
    const agent = await Agent.open({ model, store: new JsonlTranscriptStore(path) });
    expect(agent.messages).toHaveLength(2);
    const events = await lastValueFrom(agent.continue().pipe(toArray()));
    assertEventGrammar(events);

    const sent = model.calls[0]?.messages ?? [];
    expect(sent.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult"]);
    expect(sent[2]).toMatchObject({ toolCallId: "call-hang", isError: true });
    const stored = await new JsonlTranscriptStore(path).load();
    expect(stored.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(stored).toStrictEqual(agent.messages);
  });
});
