import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/index.js";
import { waitFor } from "../server/helpers.js";

const objectSchema = { type: "object" as const, properties: {} };
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

/** A server of our own whose `tools/list` answers as `list` says (`listChanged`: it may announce changes), connected to a client. */
async function connect(
  list: (cursor: string | undefined) => ListToolsResult | Promise<ListToolsResult>,
  listChanged = false,
): Promise<{ server: Server; client: Client; requests: () => number }> {
  const server = new Server({ name: "hostile", version: "1.0.0" }, { capabilities: { tools: { listChanged } } });
  let requests = 0;
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    requests++;
    return list(request.params?.cursor);
  });
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "rxagent-test", version: "1.0.0" });
  await client.connect(clientSide);
  open.push(client, server);
  return { server, client, requests: () => requests };
}

// Issue 27, row 9: a server whose tools/list hands out a new nextCursor forever kept `serve` from
// starting while memory grew 3.4 MB/s.
describe("mcpTools listing bounds", () => {
  it("fails a listing whose nextCursor never ends after maxListPages pages, with a clear error", async () => {
    const { client, requests } = await connect((cursor) => ({
      tools: [{ name: `tool_${cursor ?? 0}`, inputSchema: objectSchema }],
      nextCursor: String(Number(cursor ?? 0) + 1),
    }));
    await expect(mcpTools(client)).rejects.toThrow(
      "The MCP server listed more than 100 pages of tools (it keeps sending a new nextCursor); raise maxListPages if it really has that many.",
    );
    expect(requests()).toBe(100);
    await expect(mcpTools(client, { maxListPages: 3 })).rejects.toThrow(/more than 3 pages/);
  });

  it("fails a listing with more than maxTools tools", async () => {
    const { client } = await connect(() => ({ tools: Array.from({ length: 6 }, (_, index) => ({ name: `tool_${index}`, inputSchema: objectSchema })) }));
    await expect(mcpTools(client, { maxTools: 5 })).rejects.toThrow("The MCP server listed more than 5 tools; raise maxTools if it really has that many.");
    expect(await mcpTools(client, { maxTools: 6 })).toHaveLength(6);
  });

  it("fails a listing whose page never comes after listTimeoutMs", async () => {
    const { client } = await connect(() => new Promise<ListToolsResult>(() => undefined));
    await expect(mcpTools(client, { listTimeoutMs: 50 })).rejects.toThrow(/Request timed out/);
  });

  it("ends a call that reports progress forever after maxCallMs, however often progress restarts its limit", async () => {
    const server = new Server({ name: "chatty", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: "forever", inputSchema: objectSchema }] }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const progressToken = request.params._meta?.progressToken;
      return new Promise((_resolve, reject) => {
        let progress = 0;
        const timer = setInterval(() => {
          if (progressToken !== undefined) void extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: ++progress } });
        }, 5);
        extra.signal.addEventListener("abort", () => {
          clearInterval(timer);
          reject(new Error("cancelled"));
        });
      });
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "rxagent-test", version: "1.0.0" });
    await client.connect(clientSide);
    open.push(client, server);
    const [tool] = await mcpTools(client, { timeoutMs: 30, maxCallMs: 150 });
    const updates: unknown[] = [];
    const call = Promise.resolve(tool!.execute("call_1", {}, { signal: new AbortController().signal, update: (partial) => updates.push(partial) }));
    await expect(call).rejects.toThrow(/Maximum total timeout exceeded/);
    expect(updates.length).toBeGreaterThan(0);
  });
});

// Each notification started a listing of its own: a server that announced a change 200 times
// had 200 listings in flight at once, each holding its pages (up to maxTools tools) until the
// last answered.
describe("mcpTools and a server that announces changes in a flood", () => {
  it("keeps one listing in flight and one to follow, and ends on the server's latest list", async () => {
    let version = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    // The listing after the first announcement answers only once all 200 are sent.
    let announced = (): void => undefined;
    const allAnnounced = new Promise<void>((resolve) => (announced = resolve));
    const { server, client, requests: listings } = await connect(async () => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      const listed = version;
      if (listed > 0) await allAnnounced;
      inFlight--;
      return { tools: [{ name: `tool_v${listed}`, inputSchema: objectSchema }] };
    }, true);
    const changes: string[][] = [];
    const tools = await mcpTools(client, { onToolsChanged: (current) => changes.push(current.map((tool) => tool.name)) });
    version = 1;
    await server.sendToolListChanged();
    await waitFor(() => listings() === 2, "the listing after the first announcement");
    for (version = 2; version <= 200; version++) await server.sendToolListChanged();
    version = 200;
    announced();
    await waitFor(() => tools[0]?.name === "tool_v200" && inFlight === 0, "the server's latest list");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([listings(), mostInFlight]).toStrictEqual([3, 1]);
    expect(tools.map((tool) => tool.name)).toStrictEqual(["tool_v200"]);
    expect(changes).toStrictEqual([["tool_v1"], ["tool_v200"]]);
  });
});

