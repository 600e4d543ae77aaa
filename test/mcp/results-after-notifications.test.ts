import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { fileURLToPath } from "node:url";
import { lastValueFrom, toArray } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/index.js";
import { resultsAfterNotifications } from "../../src/mcp/results-after-notifications.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentEvent } from "../../src/types.js";
import { userMessage } from "../testing/fixtures.js";
import { type Connection, connectStdio } from "./servers.js";

const server = fileURLToPath(new URL("./progress-with-result-server.mjs", import.meta.url));
const open: Connection[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((connection) => connection.close()));
});

describe("an MCP call whose progress and result come in one read", () => {
  // The MCP SDK settles a call as it reads the result and dispatches notifications a microtask
  // later: without the reordering, all three updates were dropped.
  it("turns every progress notification into a tool_execution_update before the result", async () => {
    const connection = await connectStdio(process.execPath, [server]);
    open.push(connection);
    const tools = await mcpTools(connection.client);
    const model = scriptedModel([{ content: [{ type: "toolCall", name: "work", arguments: {} }] }, "done"]);
    const events: AgentEvent[] = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools }, { model }).pipe(toArray()));
    assertEventGrammar(events);
    const updates = events.flatMap((event) => (event.type === "tool_execution_update" ? [event.partialResult] : []));
    expect(updates).toStrictEqual([1, 2, 3].map((step) => ({ content: [{ type: "text", text: `step ${step}` }], details: { progress: step, total: 3, message: `step ${step}` } })));
    const end = events.find((event) => event.type === "tool_execution_end");
    expect(end).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "worked" }] } });
  }, 20_000);

  it("calls on: a second call on the same client reports its progress too, the transport reordered once", async () => {
    const connection = await connectStdio(process.execPath, [server]);
    open.push(connection);
    const tools = await mcpTools(connection.client);
    const model = scriptedModel([{ content: [{ type: "toolCall", name: "work", arguments: {} }] }, { content: [{ type: "toolCall", name: "work", arguments: {} }] }, "done"]);
    const events: AgentEvent[] = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools }, { model }).pipe(toArray()));
    expect(events.filter((event) => event.type === "tool_execution_update")).toHaveLength(6);
    expect(events.filter((event) => event.type === "tool_execution_end").map((event) => (event as { isError: boolean }).isError)).toStrictEqual([false, false]);
  }, 20_000);
});

describe("resultsAfterNotifications", () => {
  it("hands a response on after the notifications read with it, and other messages at once", async () => {
    const seen: string[] = [];
    const transport = { onmessage: (message: { id?: number; method?: string }) => seen.push(message.method ?? `response ${message.id}`), onerror: () => undefined };
    const client = { transport } as unknown as Client;
    resultsAfterNotifications(client);
    resultsAfterNotifications(client);
    const onmessage = transport.onmessage as (message: unknown) => void;
    onmessage({ jsonrpc: "2.0", id: 1, result: {} });
    onmessage({ jsonrpc: "2.0", method: "notifications/progress", params: {} });
    expect(seen).toStrictEqual(["notifications/progress"]);
    await Promise.resolve();
    expect(seen).toStrictEqual(["notifications/progress", "response 1"]);
  });

  it("sends what handing on a response throws to the transport's onerror, not to the process", async () => {
    const errors: Error[] = [];
    const transport = {
      onmessage: () => {
        throw new Error("handler failed");
      },
      onerror: (error: Error) => errors.push(error),
    };
    resultsAfterNotifications({ transport } as unknown as Client);
    (transport.onmessage as (message: unknown) => void)({ jsonrpc: "2.0", id: 7, error: { code: 1, message: "no" } });
    await Promise.resolve();
    expect(errors.map((error) => error.message)).toStrictEqual(["handler failed"]);
  });

  // String(error) threw again inside the microtask that hands responses on: an uncaught
  // exception, which ends the process.
  it("sends a thrown value whose toString throws to onerror as text", async () => {
    const errors: Error[] = [];
    const transport = {
      onmessage: () => {
        throw {
          toString(): string {
            throw new Error("no text");
          },
        };
      },
      onerror: (error: Error) => errors.push(error),
    };
    resultsAfterNotifications({ transport } as unknown as Client);
    (transport.onmessage as (message: unknown) => void)({ jsonrpc: "2.0", id: 8, result: {} });
    await Promise.resolve();
    expect(errors.map((error) => error.message)).toStrictEqual(["{}"]);
  });
});
