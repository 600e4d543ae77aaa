import { Type } from "@sinclair/typebox";
import { asyncScheduler } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { connectAgent, type AgentClient } from "../../src/client/index.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentToolResult, ToolResultMessage } from "../../src/types.js";
import { RawClient, waitFor } from "./helpers.js";

let server: AgentServer | undefined;
const clients: AgentClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await server?.close();
  server = undefined;
});

/** An agent whose model calls "wait" (which runs until its signal fires) and "quick" (10 ms) in one batch. */
function waitingAgent(): Agent {
  const wait = defineTool({
    name: "wait",
    description: "Waits until cancelled",
    parameters: Type.Object({}),
    execute: (_id, _args, { signal }) =>
      new Promise<AgentToolResult>((resolve) => signal.addEventListener("abort", () => resolve(textResult("never used")))),
  });
  const quick = defineTool({
    name: "quick",
    description: "Answers after 10 ms",
    parameters: Type.Object({}),
    execute: () => new Promise<AgentToolResult>((resolve) => setTimeout(() => resolve(textResult("quick done")), 10)),
  });
  const model = scriptedModel(
    [{ content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }, { type: "toolCall", id: "q1", name: "quick", arguments: {} }] }, "All done."],
    { scheduler: asyncScheduler, delay: 2 },
  );
  return new Agent({ model, tools: [wait, quick] });
}

describe("cancel_tool over the WebSocket bridge", () => {
  it("cancels one running call from a client: its error result says why, the other call and the run finish", async () => {
    server = await serveAgents({ port: 0, createAgent: () => waitingAgent() });
    const client = connectAgent(server.url, { session: "c", WebSocket });
    clients.push(client);
    const events: AgentEvent[] = [];
    client.events$.subscribe((event) => events.push(event));
    await client.ready;
    await client.prompt("go");
    await waitFor(() => client.state.pendingToolCalls.includes("w1") && events.some((event) => event.type === "tool_execution_end"), "w1 running, q1 done");
    await expect(client.cancelTool("nope")).rejects.toMatchObject({ name: "RemoteCommandError", code: "invalid_state" });
    await client.cancelTool("w1", "taking too long");
    await waitFor(() => events.some((event) => event.type === "agent_end"), "agent_end");
    expect(events.filter((event) => event.type === "tool_execution_end").map((event) => [event.toolCallId, event.isError])).toStrictEqual([
      ["q1", false],
      ["w1", true],
    ]);
    const results = client.state.messages.filter((message): message is ToolResultMessage => (message as { role: string }).role === "toolResult");
    expect(results.map((result) => [result.toolCallId, result.isError, result.content])).toStrictEqual([
      ["w1", true, [{ type: "text", text: "Tool call was cancelled: taking too long" }]],
      ["q1", false, [{ type: "text", text: "quick done" }]],
    ]);
    expect(events[events.length - 1]).toMatchObject({ type: "agent_end", reason: "idle" });
    // Nothing wedged: the session takes another prompt.
    await expect(client.cancelTool("w1")).rejects.toMatchObject({ code: "invalid_state" });
  });

  it("approve / deny: a client attaching late gets the waiting call in its snapshot; answers for calls not waiting are invalid_state", async () => {
    const deploy = defineTool({
      name: "deploy",
      description: "Deploys",
      parameters: Type.Object({}),
      needsApproval: true,
      execute: () => textResult("deployed"),
    });
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "d1", name: "deploy", arguments: {} }] }, "ok"], { scheduler: asyncScheduler, delay: 2 });
    server = await serveAgents({ port: 0, createAgent: () => new Agent({ model, tools: [deploy] }) });
    const first = connectAgent(server.url, { session: "a", WebSocket });
    clients.push(first);
    await first.ready;
    await first.prompt("go");
    await waitFor(() => first.state.pendingApprovals.length === 1, "a pending approval");
    const late = connectAgent(server.url, { session: "a", WebSocket });
    clients.push(late);
    await late.ready;
    await waitFor(() => late.state.pendingApprovals.length === 1, "the late client's snapshot");
    expect(late.state.pendingApprovals).toStrictEqual([{ toolCallId: "d1", toolName: "deploy", args: {}, since: expect.any(Number) }]);
    await expect(late.approve("nope")).rejects.toMatchObject({ name: "RemoteCommandError", code: "invalid_state" });
    await expect(late.deny("nope", "x")).rejects.toMatchObject({ code: "invalid_state" });
    await late.approve("d1");
    await waitFor(() => !first.state.isStreaming && first.state.messages.length === 4, "the run's end");
    expect(first.state.pendingApprovals).toStrictEqual([]);
    const result = first.state.messages[2] as ToolResultMessage;
    expect([result.toolCallId, result.isError, result.content]).toStrictEqual(["d1", false, [{ type: "text", text: "deployed" }]]);
  });

  it("answers malformed cancel_tool, approve and deny frames with invalid_frame naming the field, and keeps the session", async () => {
    server = await serveAgents({ port: 0, createAgent: () => waitingAgent() });
    const raw = await RawClient.open(server.url);
    try {
      await raw.request({ type: "attach", session: "m" });
      const replies = [];
      for (const frame of [
        { type: "cancel_tool" },
        { type: "cancel_tool", toolCallId: "" },
        { type: "approve", toolCallId: 5 },
        { type: "deny", toolCallId: "x", reason: "r".repeat(1001) },
        { type: "deny", toolCallId: "x", extra: true },
      ]) {
        const reply = await raw.request(frame);
        replies.push(reply.type === "error" ? [reply.code, /\/(toolCallId|reason|extra)/.exec(reply.message)?.[1]] : [reply.type]);
      }
      expect(replies).toStrictEqual([
        ["invalid_frame", "toolCallId"],
        ["invalid_frame", "toolCallId"],
        ["invalid_frame", "toolCallId"],
        ["invalid_frame", "reason"],
        ["invalid_frame", "extra"],
      ]);
      expect(await raw.request({ type: "cancel_tool", toolCallId: "w1" })).toMatchObject({ type: "error", code: "invalid_state" });
      expect(await raw.request({ type: "prompt", input: "still works" })).toMatchObject({ type: "ack" });
    } finally {
      await raw.close();
    }
  });
});
