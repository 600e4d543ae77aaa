import { Type } from "@sinclair/typebox";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, ToolResultMessage } from "../../src/types.js";
import { deepArgumentsModel } from "../helpers/deep-json.js";
import { RawClient, waitFor } from "./helpers.js";

let server: AgentServer | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.terminate();
  await server?.close();
  server = undefined;
});

// A default in the schema: validation then runs TypeBox's `Value.Clone`, which recursed past the stack.
const echo = defineTool({
  name: "echo",
  description: "Echoes its items",
  parameters: Type.Object({ items: Type.Array(Type.Unknown()), note: Type.Optional(Type.String({ default: "none" })) }),
  execute: () => textResult("echoed"),
});

async function attached(url: string, session: string): Promise<RawClient> {
  const client = await RawClient.open(url);
  clients.push(client);
  expect(await client.request({ type: "attach", session })).toMatchObject({ type: "ack" });
  return client;
}

function agentEnd(client: RawClient): Extract<AgentEvent, { type: "agent_end" }> | undefined {
  return client.agentEvents().find((event): event is Extract<AgentEvent, { type: "agent_end" }> => event.type === "agent_end");
}

function toolResultOf(client: RawClient): ToolResultMessage | undefined {
  const end = client.agentEvents().find((event) => event.type === "tool_execution_end");
  return end?.type === "tool_execution_end" ? (end.result as unknown as ToolResultMessage) : undefined;
}

describe("serveAgents with tool-call arguments nested 6,000 deep (issue 27, row 1)", () => {
  it("survives: the call gets an error result the model can read, the run ends, other sessions go on", async () => {
    server = await serveAgents({
      port: 0,
      heartbeatIntervalMs: 0,
      createAgent: (sessionId) =>
        sessionId === "deep" ? new Agent({ model: deepArgumentsModel("echo", 6000), tools: [echo] }) : new Agent({ model: scriptedModel(["calm reply"]) }),
    });
    const deep = await attached(server.url, "deep");
    const calm = await attached(server.url, "calm");

    expect(await deep.request({ type: "prompt", input: "go" })).toMatchObject({ type: "ack" });
    await waitFor(() => agentEnd(deep), "the deep run's agent_end");

    const events = deep.agentEvents();
    const types = events.map((event) => event.type).filter((type) => type !== "message_update");
    expect(types).toStrictEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
      "turn_end",
      "turn_start",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
    expect(events.find((event) => event.type === "tool_execution_start")).toMatchObject({ toolCallId: "call_deep", args: {} });
    expect(events.find((event) => event.type === "tool_execution_end")).toMatchObject({ toolCallId: "call_deep", isError: true });
    const resultText = JSON.stringify(toolResultOf(deep));
    expect(resultText).toContain('Invalid arguments for tool \\"echo\\": arguments nest deeper than 128 levels.');
    expect(agentEnd(deep)).toMatchObject({ type: "agent_end" });

    // The process and its other sessions are alive.
    expect(await calm.request({ type: "prompt", input: "hello" })).toMatchObject({ type: "ack" });
    await waitFor(() => agentEnd(calm), "the calm run's agent_end");
    expect(deep.socket.readyState).toBe(deep.socket.OPEN);
  });
});
