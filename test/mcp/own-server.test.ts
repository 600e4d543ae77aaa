import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { lastValueFrom, toArray } from "rxjs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { mcpTools } from "../../src/mcp/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel, type ScriptedReply } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentTool, LlmContext, ToolResultMessage } from "../../src/types.js";
import { Type } from "@sinclair/typebox";
import { userMessage } from "../testing/fixtures.js";

const objectSchema = { type: "object" as const, properties: {} };

/**
 * A small server on the SDK's low-level `Server`: tools/list in pages of two, tools that add a
 * tool (and announce tools/list_changed), fail, hang, or answer with audio and a blob resource.
 */
function ownServer() {
  const server = new Server({ name: "own", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
  const tools: Tool[] = ["add_tool", "fail", "hang", "media"].map((name) => ({ name, description: name, inputSchema: objectSchema }));
  const cancelled: unknown[] = [];
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const start = Number(request.params?.cursor ?? 0);
    const page = tools.slice(start, start + 2);
    return start + 2 < tools.length ? { tools: page, nextCursor: String(start + 2) } : { tools: page };
  });
  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> | CallToolResult => {
    switch (request.params.name) {
      case "add_tool":
        tools.push({ name: `added_${tools.length}`, description: "added", inputSchema: objectSchema });
        void server.sendToolListChanged();
        return { content: [{ type: "text", text: "added" }] };
      case "fail":
        return { content: [{ type: "text", text: "the disk is full" }], structuredContent: { code: 28 }, isError: true };
      case "hang":
        return new Promise((_resolve, reject) =>
          extra.signal.addEventListener("abort", () => {
            cancelled.push(extra.requestId);
            reject(new Error("cancelled"));
          }),
        );
      case "media":
        return {
          content: [
            { type: "audio", data: "AAAA", mimeType: "audio/wav" },
            { type: "resource", resource: { uri: "file:///pixel.png", mimeType: "image/png", blob: "iVBORw0KGgo=" } },
            { type: "resource", resource: { uri: "file:///data.bin", mimeType: "application/octet-stream", blob: "AAECAw==" } },
          ],
        };
      default:
        return { content: [{ type: "text", text: `unknown tool ${request.params.name}` }], isError: true };
    }
  });
  return { server, tools, cancelled };
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

async function connectOwn() {
  const own = ownServer();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await own.server.connect(serverSide);
  const client = new Client({ name: "rxagent-test", version: "1.0.0" });
  await client.connect(clientSide);
  open.push(client, own.server);
  return { ...own, client };
}

function toolResults(events: AgentEvent[]): ToolResultMessage[] {
  return events.flatMap((event) => (event.type === "message_end" && event.message.role === "toolResult" ? [event.message as ToolResultMessage] : []));
}

describe("mcpTools with a server of our own", () => {
  it("follows tools/list pagination", async () => {
    const { client } = await connectOwn();
    expect((await mcpTools(client)).map((tool) => tool.name)).toStrictEqual(["add_tool", "fail", "hang", "media"]);
  });

  it("stops listing at a repeated cursor, and makes names provider-safe and unique", async () => {
    const server = new Server({ name: "odd", version: "1.0.0" }, { capabilities: { tools: {} } });
    const names = ["files.read", "files/read", "x".repeat(70), "mine"];
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: names.map((name) => ({ name, inputSchema: objectSchema })),
      nextCursor: "same-cursor-forever",
    }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "rxagent-test", version: "1.0.0" });
    await client.connect(clientSide);
    open.push(client, server);
    const mine = defineTool({ name: "mine", description: "", parameters: Type.Object({}), execute: () => textResult("mine") });
    const tools = await mcpTools(client, { into: [mine] });
    // Two pages: the first cursor is followed once, then seen again.
    expect(tools.map((tool) => tool.name)).toStrictEqual([
      "mine",
      "files_read",
      "files_read_2",
      "x".repeat(64),
      "mine_2",
      "files_read_3",
      "files_read_4",
      `${"x".repeat(62)}_2`,
      "mine_3",
    ]);
  });

  it("applies a changed tool list from the next model call, in the shared array, keeping other tools", async () => {
    const { client } = await connectOwn();
    const own = defineTool({ name: "mine", description: "", parameters: Type.Object({}), execute: () => textResult("mine") });
    const tools: AgentTool[] = [own];
    const changed: string[][] = [];
    let toolsChanged!: () => void;
    const listRefreshed = new Promise<undefined>((resolve) => (toolsChanged = () => resolve(undefined)));
    await mcpTools(client, {
      into: tools,
      prefix: "own_",
      onToolsChanged: (list) => {
        changed.push(list.map((tool) => tool.name));
        toolsChanged();
      },
    });
    // What each model call was sent, read during the call (the array is live).
    const sent: string[][] = [];
    const seeing = (reply: ScriptedReply | string) => (context: LlmContext) => {
      sent.push(context.tools!.map((tool) => tool.name));
      return reply;
    };
    const model = scriptedModel([
      seeing({ content: [{ type: "toolCall", name: "own_add_tool", arguments: {} }] }),
      seeing({ content: [{ type: "toolCall", name: "own_added_4", arguments: {} }] }),
      seeing("done"),
    ]);
    const events = await lastValueFrom(
      agentLoop([userMessage("go")], { messages: [], tools }, {
        model,
        // The next model call waits until the list_changed notification and the new tools/list have arrived.
        afterToolCall: () => listRefreshed,
      }).pipe(toArray()),
    );
    assertEventGrammar(events);
    expect(sent).toStrictEqual([
      ["mine", "own_add_tool", "own_fail", "own_hang", "own_media"],
      ["mine", "own_add_tool", "own_fail", "own_hang", "own_media", "own_added_4"],
      ["mine", "own_add_tool", "own_fail", "own_hang", "own_media", "own_added_4"],
    ]);
    expect(changed).toStrictEqual([["own_add_tool", "own_fail", "own_hang", "own_media", "own_added_4"]]);
    expect(toolResults(events).map((result) => [result.toolName, result.isError])).toStrictEqual([
      ["own_add_tool", false],
      ["own_added_4", true],
    ]);
  });

  it("keeps the old list when listing fails after tools/list_changed, and says why", async () => {
    const server = new Server({ name: "flaky", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
    let listings = 0;
    server.setRequestHandler(ListToolsRequestSchema, () => {
      if (++listings > 1) throw new Error("listing is broken now");
      return { tools: [{ name: "steady", inputSchema: objectSchema }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "rxagent-test", version: "1.0.0" });
    await client.connect(clientSide);
    open.push(client, server);
    const reports: [string[], string | undefined][] = [];
    const tools = await mcpTools(client, { onToolsChanged: (list, error) => reports.push([list.map((tool) => tool.name), (error as Error | undefined)?.message]) });
    await server.sendToolListChanged();
    await vi.waitFor(() => expect(reports.length).toBe(1));
    expect(reports).toStrictEqual([[["steady"], "MCP error -32603: listing is broken now"]]);
    expect(tools.map((tool) => tool.name)).toStrictEqual(["steady"]);
  });

  // A rejecting one (an async listener) was an unhandled rejection, which ends the process.
  it.each(["throws", "rejects"] as const)("reports an onToolsChanged that %s to the console (no unhandled rejection) and still applies the new list", async (failure) => {
    const { client } = await connectOwn();
    let called = 0;
    const tools = await mcpTools(client, {
      onToolsChanged: () => {
        called++;
        if (failure === "throws") throw new Error("listener bug");
        return Promise.reject(new Error("listener bug")) as never;
      },
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    const warnings: unknown[] = [];
    const warn = vi.spyOn(console, "warn").mockImplementation((message: unknown) => void warnings.push(message));
    process.on("unhandledRejection", onUnhandled);
    try {
      await client.callTool({ name: "add_tool", arguments: {} });
      await vi.waitFor(() => expect(warnings).toStrictEqual(["rxagent: onToolsChanged failed: listener bug"]));
      await new Promise((resolve) => setImmediate(resolve));
      expect(called).toBe(1);
      expect(unhandled).toStrictEqual([]);
      expect(tools.map((tool) => tool.name)).toStrictEqual(["add_tool", "fail", "hang", "media", "added_4"]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      warn.mockRestore();
    }
  });

  it("turns isError into an error result carrying the server's text", async () => {
    const { client } = await connectOwn();
    const tools = await mcpTools(client);
    const events = await lastValueFrom(
      agentLoop([userMessage("go")], { messages: [], tools }, { model: scriptedModel([{ content: [{ type: "toolCall", name: "fail", arguments: {} }] }, "done"]) }).pipe(toArray()),
    );
    expect(toolResults(events)).toMatchObject([{ isError: true, content: [{ type: "text", text: "the disk is full" }] }]);
  });

  it("maps audio and embedded blobs: an image blob stays an image, others are described", async () => {
    const { client } = await connectOwn();
    const media = (await mcpTools(client)).find((tool) => tool.name === "media")!;
    const result = await (media.execute("id", {}, { signal: new AbortController().signal, update: () => undefined }) as Promise<unknown>);
    expect(result).toStrictEqual({
      content: [
        { type: "text", text: "[audio: audio/wav, 3 bytes, not shown]" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "text", text: "[resource <file:///data.bin> (application/octet-stream): 4 bytes, not shown]" },
      ],
      details: undefined,
    });
  });

  it("gives a hanging call an error result at the tool's time limit, cancels it on the server, and goes on", async () => {
    const { client, cancelled } = await connectOwn();
    const tools = await mcpTools(client, { timeoutMs: 200 });
    const model = scriptedModel([{ content: [{ type: "toolCall", name: "hang", arguments: {} }] }, "done"]);
    const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools }, { model }).pipe(toArray()));
    assertEventGrammar(events);
    expect(toolResults(events)).toMatchObject([{ isError: true, content: [{ type: "text", text: 'Tool "hang" timed out after 200 ms' }] }]);
    expect(model.calls.length).toBe(2);
    await vi.waitFor(() => expect(cancelled.length).toBe(1));
  });

  // The SDK's `listTools` compiled each outputSchema with its own Ajv, whose patterns are native
  // regular expressions: 26 characters against `^(a+)+$` held the process 3.4 s, 30 about 55 s.
  it("checks no outputSchema with the SDK's regular expressions: a crafted pattern holds nothing up, and structured content becomes details", async () => {
    const server = new Server({ name: "crafted", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: "report", inputSchema: objectSchema, outputSchema: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } } }],
    }));
    const answers = ["b", `${"a".repeat(30)}!`];
    server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: "text", text: "done" }], structuredContent: { s: answers.shift() } }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "rxagent-test", version: "1.0.0" });
    await client.connect(clientSide);
    open.push(client, server);
    const [report] = await mcpTools(client);
    const call = () => report!.execute("id", {}, { signal: new AbortController().signal, update: () => undefined }) as Promise<unknown>;
    // Not matching the schema, and passed on: the SDK's check refused it ("Structured content does not match").
    expect(await call()).toStrictEqual({ content: [{ type: "text", text: "done" }], details: { s: "b" } });
    expect(await call()).toStrictEqual({ content: [{ type: "text", text: "done" }], details: { s: `${"a".repeat(30)}!` } });
  });
});
