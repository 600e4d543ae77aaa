/**
 * A crafted MCP server that answers with anything (property-based): tool lists whose names,
 * descriptions and schemas are of any kind (deep, huge, not schemas at all, patterns made to
 * backtrack), and calls answered with results, errors or progress of any shape. Spoken as raw
 * JSON-RPC over the SDK's in-memory transport, so no server-side SDK check tidies the answers.
 * `mcpTools` either rejects with an Error that says why, or gives tools with which a run ends with
 * `agent_end`, one result per call, and events that can be written out.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type JSONRPCMessage, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentEvent, AgentTool } from "../../src/types.js";
import { userMessage } from "../testing/fixtures.js";
import { deepArray, junk, maybe } from "../helpers/arbitrary-json.js";

const deepSchema = (levels: number): unknown => JSON.parse(`${'{"type":"object","properties":{"a":'.repeat(levels)}{}${"}}".repeat(levels)}`);
const schema = fc.oneof(
  fc.constant({ type: "object", properties: {} }),
  fc.constant({ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } }, required: ["s"] }),
  fc.constant({ type: "object", properties: { n: { type: "nonsense" } } }),
  fc.constant({ type: "object", properties: { r: { $ref: "#/nowhere" } } }),
  fc.constant({ type: "object", properties: { p: { type: "string", pattern: "(" } } }),
  fc.constant({ type: "object", $ref: "#" }),
  fc.constant(deepSchema(3000)),
  fc.jsonValue({ maxDepth: 3 }),
);
const tool = fc.record(
  {
    name: maybe(fc.oneof(fc.constantFrom("echo", "", "a.b/c", "x".repeat(100), "__proto__", "constructor"), fc.string({ maxLength: 6 }))),
    description: maybe(fc.string({ maxLength: 8 })),
    title: maybe(fc.string({ maxLength: 4 })),
    inputSchema: maybe(schema),
    outputSchema: maybe(schema),
    annotations: maybe(fc.record({ title: maybe(fc.string({ maxLength: 4 })) }, { requiredKeys: [] })),
  },
  { requiredKeys: [] },
);
const block = fc.oneof(
  fc.record({ type: maybe(fc.constant("text")), text: maybe(fc.string({ maxLength: 8 })) }, { requiredKeys: [] }),
  fc.record({ type: maybe(fc.constantFrom("image", "audio")), data: maybe(fc.constantFrom("iVBORw0KGgo=", "", "%%%")), mimeType: maybe(fc.constantFrom("image/png", "audio/wav", "")) }, { requiredKeys: [] }),
  fc.record({ type: fc.constantFrom("resource", "resource_link"), uri: maybe(fc.constant("file:///x")), resource: maybe(fc.record({ uri: maybe(fc.constant("file:///y")), text: maybe(fc.string({ maxLength: 4 })), blob: maybe(fc.constant("AAAA")) }, { requiredKeys: [] })) }, { requiredKeys: [] }),
  fc.record({ type: fc.constant("hologram"), depth: fc.constant(deepArray(3000)) }),
);
const callAnswer = fc.oneof(
  { weight: 4, arbitrary: fc.record({ result: fc.record({ content: maybe(fc.array(maybe(block), { maxLength: 3 })), isError: maybe(fc.boolean()), structuredContent: maybe(fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant({ s: `${"a".repeat(40)}!` }), fc.constant({ d: deepArray(3000) }))) }, { requiredKeys: [] }) }) },
  { weight: 1, arbitrary: fc.record({ error: fc.record({ code: maybe(fc.integer()), message: maybe(fc.string({ maxLength: 8 })), data: maybe(fc.jsonValue({ maxDepth: 2 })) }, { requiredKeys: [] }) }) },
  { weight: 1, arbitrary: fc.record({ result: junk }) },
);
const server = fc.record({
  list: fc.oneof({ weight: 5, arbitrary: fc.record({ result: fc.record({ tools: fc.array(maybe(tool), { minLength: 1, maxLength: 4 }), nextCursor: maybe(fc.constant("again")) }, { requiredKeys: ["tools"] }) }) }, { weight: 1, arbitrary: fc.record({ result: junk }) }),
  calls: fc.array(callAnswer, { minLength: 1, maxLength: 3 }),
  progress: fc.array(maybe(fc.record({ progress: maybe(fc.double()), total: maybe(fc.integer()), message: maybe(fc.string({ maxLength: 4 })) }, { requiredKeys: [] })), { maxLength: 2 }),
});
type CraftedServer = typeof server extends fc.Arbitrary<infer T> ? T : never;

/** Connects a client to a peer that answers `initialize` properly and everything else as `crafted` says. */
async function connectCrafted(crafted: CraftedServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  let call = 0;
  const send = (message: unknown) => void serverSide.send(message as JSONRPCMessage);
  serverSide.onmessage = (message) => {
    const request = message as { id?: number | string; method?: string; params?: { _meta?: { progressToken?: unknown } } };
    if (request.id === undefined || request.method === undefined) return;
    const reply = (answer: object) => send({ jsonrpc: "2.0", id: request.id, ...answer });
    if (request.method === "initialize") reply({ result: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: { tools: { listChanged: true } }, serverInfo: { name: "crafted", version: "1.0.0" } } });
    else if (request.method === "tools/list") reply(crafted.list);
    else if (request.method === "tools/call") {
      const token = request.params?._meta?.progressToken;
      for (const progress of crafted.progress) send({ jsonrpc: "2.0", method: "notifications/progress", params: { ...(typeof progress === "object" ? progress : { progress }), progressToken: token } });
      reply(crafted.calls[call++ % crafted.calls.length]!);
    } else reply({ error: { code: -32601, message: "not here" } });
  };
  await serverSide.start();
  const client = new Client({ name: "rxagent-test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

describe("an MCP server that answers with anything (property-based)", () => {
  it("lists with a clear error or gives tools whose runs end with one result per call", async () => {
    await fc.assert(
      fc.asyncProperty(server, async (crafted) => {
        const client = await connectCrafted(crafted);
        try {
          let tools: AgentTool[];
          try {
            // Short limits: the SDK drops an answer that is not a JSON-RPC result (`"result": null`)
            // as no answer at all, so that request ends at its limit.
            tools = await mcpTools(client, { timeoutMs: 150, listTimeoutMs: 100 });
          } catch (error) {
            expect(error).toBeInstanceOf(Error);
            expect((error as Error).message).not.toBe("");
            return;
          }
          const calls = tools.slice(0, 3).map((each, index) => ({ type: "toolCall" as const, id: `call_${index}`, name: each.name, arguments: {} }));
          const model = scriptedModel([{ content: calls.length > 0 ? calls : [{ type: "text", text: "no tools" }] }, "done"]);
          const events: AgentEvent[] = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools }, { model }).pipe(toArray()));
          assertEventGrammar(events);
          expect(events.at(-1)?.type).toBe("agent_end");
          expect(events.filter((event) => event.type === "tool_execution_end")).toHaveLength(calls.length);
          expect(() => JSON.stringify(events)).not.toThrow();
        } finally {
          await client.close();
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
