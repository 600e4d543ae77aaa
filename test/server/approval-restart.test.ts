import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/index.js";
import type { AgentEvent, ToolResultMessage } from "../../src/index.js";
import { type AgentServer, JsonlTranscriptStore, serveAgents } from "../../src/server/index.js";
import { assertEventGrammar, scriptedModel } from "../../src/testing/index.js";
import { approvalTools } from "./approval-restart-tools.js";
import { RawClient, waitFor } from "./helpers.js";

function runUntilWaitingThenKill(path: string): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/server/approval-restart-child.ts", path], { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("READY")) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) => resolve(signal));
  });
}

let server: AgentServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("a restart while a call waits for approval", () => {
  it("a process killed while an approval is pending reopens with it pending over the WebSocket server; approving it finishes the run with a valid transcript", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rxagent-approval-restart-")), "transcript.jsonl");
    expect(await runUntilWaitingThenKill(path)).toBe("SIGKILL");
    const lines = readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { role?: string; rxagent?: { type: string } });
    expect(lines.map((line) => line.role ?? line.rxagent?.type)).toStrictEqual(["user", "assistant", "approval_pending", "tool_result"]);
    const since = (lines[2]?.rxagent as unknown as { approval: { since: number } }).approval.since;

    const ran: string[] = [];
    const model = scriptedModel(["Deployed to prod."]);
    let agent: Agent | undefined;
    const events: AgentEvent[] = [];
    server = await serveAgents({
      port: 0,
      createAgent: async () => {
        agent = await Agent.open({ model, tools: approvalTools(ran), store: new JsonlTranscriptStore(path) });
        agent.currentRun$?.subscribe((event) => events.push(event));
        return agent;
      },
    });
    const client = await RawClient.open(server.url);
    await client.request({ type: "attach", session: "restarted" });
    const snapshot = await waitFor(() => client.frames.find((frame) => frame.type === "snapshot"), "the snapshot");
    expect(snapshot.state.isStreaming).toBe(true);
    expect(snapshot.state.pendingApprovals).toStrictEqual([{ toolCallId: "d1", toolName: "deploy", args: { target: "prod" }, since }]);
    expect(ran).toStrictEqual([]);

    expect(await client.request({ type: "approve", toolCallId: "d1" })).toMatchObject({ type: "ack" });
    await waitFor(() => client.hasEvent("agent_end"), "agent_end");
    await client.close();

    expect(ran).toStrictEqual(["d1"]);
    assertEventGrammar(events);
    expect(client.agentEvents().filter((event) => event.type !== "message_update").map((event) => event.type)).toStrictEqual([
      "tool_approval_end",
      "tool_execution_end",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
    const messages = await new JsonlTranscriptStore(path).load();
    expect(messages.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
    expect((messages.slice(2, 4) as ToolResultMessage[]).map((result) => [result.toolCallId, result.isError, result.content])).toStrictEqual([
      ["d1", false, [{ type: "text", text: "deployed to prod" }]],
      ["r1", false, [{ type: "text", text: "read it" }]],
    ]);
    expect(model.calls[0]?.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "toolResult"]);
  });
});
