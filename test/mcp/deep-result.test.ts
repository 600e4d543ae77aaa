import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { lastValueFrom, toArray } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentEvent } from "../../src/types.js";
import { userMessage } from "../testing/fixtures.js";

/** `{"levels": [[[…]]]}` nested `levels` deep, made from text (JSON.parse takes any depth). */
function deepValue(levels: number): Record<string, unknown> {
  return JSON.parse(`{"levels": ${"[".repeat(levels)}${"]".repeat(levels)}}`) as Record<string, unknown>;
}

/** A crafted server (issue 27, row 4): `deep_details` answers with structuredContent 6,000 deep, `deep_content` with a content block as deep. */
function craftedServer(): Server {
  const server = new Server({ name: "crafted", version: "1.0.0" }, { capabilities: { tools: {} } });
  const inputSchema = { type: "object" as const, properties: {} };
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: "deep_details", description: "deep structuredContent", inputSchema },
      { name: "deep_content", description: "deep content", inputSchema },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    request.params.name === "deep_details"
      ? { content: [{ type: "text", text: "see the data" }], structuredContent: deepValue(6000) }
      : { content: [{ type: "text", text: "a block with more", _meta: deepValue(6000) }] },
  );
  return server;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

async function runCall(name: string): Promise<AgentEvent[]> {
  const server = craftedServer();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "rxagent-test", version: "1.0.0" });
  await client.connect(clientSide);
  open.push(client, server);
  const tools = await mcpTools(client);
  const model = scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name, arguments: {} }] }, "done"]);
  return lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools }, { model }).pipe(toArray()));
}

describe("an MCP tool result nested 6,000 deep (issue 27, row 4)", () => {
  it("structuredContent: the call gets an error result saying why, the run ends, and every event can be written out", async () => {
    const events = await runCall("deep_details");

    assertEventGrammar(events);
    expect(events.find((event) => event.type === "tool_execution_end")).toMatchObject({
      isError: true,
      result: { content: [{ type: "text", text: 'Tool "deep_details" returned a result that was not kept: its details or content nest deeper than 128 levels.' }] },
    });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
    expect(() => JSON.stringify(events)).not.toThrow();
  });

  it("a content block's extra fields: dropped as the block is mapped, so the result stands", async () => {
    const events = await runCall("deep_content");

    assertEventGrammar(events);
    expect(events.find((event) => event.type === "tool_execution_end")).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "a block with more" }] } });
    expect(() => JSON.stringify(events)).not.toThrow();
  });
});
