import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as Reference from "@mariozechner/pi-agent-core";
import { getModel, type AssistantMessageEvent } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { streamProxy, type ProxyAssistantMessageEvent } from "../../src/pi-agent-core/index.js";
import { FRESH_PROCESS_TIMEOUT_MS, sourceUrl } from "../helpers/fresh-process.js";
import { runWithHiddenClassProbe } from "../helpers/hidden-classes.js";

// streamProxy against a real HTTP server sending the proxy's events, next to the reference's own
// streamProxy reading the same bytes: the same events and the same final message.

const usage = { input: 3, output: 4, cacheRead: 0, cacheWrite: 0, totalTokens: 7, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const script: ProxyAssistantMessageEvent[] = [
  { type: "start" },
  { type: "text_start", contentIndex: 0 },
  { type: "text_delta", contentIndex: 0, delta: "Hel" },
  { type: "text_delta", contentIndex: 0, delta: "lo" },
  { type: "text_end", contentIndex: 0 },
  { type: "toolcall_start", contentIndex: 1, id: "call-1", toolName: "read" },
  { type: "toolcall_delta", contentIndex: 1, delta: '{"path":' },
  { type: "toolcall_delta", contentIndex: 1, delta: '"a.txt"}' },
  { type: "toolcall_end", contentIndex: 1 },
  { type: "done", reason: "toolUse", usage },
];

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

function serve(status: number, body: (write: (text: string) => void) => void): Promise<string> {
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(status, { "content-type": status === 200 ? "text/event-stream" : "application/json" });
      body((text) => response.write(text));
      response.end();
    });
  });
  return new Promise((resolve) => server!.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server!.address() as AddressInfo).port}`)));
}

async function read(stream: AsyncIterable<AssistantMessageEvent> & { result(): Promise<unknown> }) {
  const types: string[] = [];
  for await (const event of stream) types.push(event.type);
  return { types, message: await stream.result() };
}

describe("streamProxy", () => {
  it("rebuilds the message from the proxy's events as the reference does", async () => {
    const proxyUrl = await serve(200, (write) => script.forEach((event) => write(`data: ${JSON.stringify(event)}\n\n`)));
    const model = getModel("openai", "gpt-4o-mini");
    const options = { authToken: "token", proxyUrl };
    const ours = await read(streamProxy(model, { messages: [] }, options));
    const theirs = await read(Reference.streamProxy(model, { messages: [] }, options));
    expect(ours.types).toEqual(theirs.types);
    expect({ ...(ours.message as object), timestamp: 0 }).toEqual({ ...(theirs.message as object), timestamp: 0 });
    expect(ours.message).toMatchObject({ stopReason: "toolUse", content: [{ type: "text", text: "Hello" }, { type: "toolCall", id: "call-1", name: "read", arguments: { path: "a.txt" } }] });
  });

  // The index made the message's content array that long, and the next copy of it took the
  // process's memory.
  it("a proxy that names content 10^9 ends as an error message saying so", async () => {
    const proxyUrl = await serve(200, (write) => [{ type: "start" }, { type: "text_start", contentIndex: 1e9 }].forEach((event) => write(`data: ${JSON.stringify(event)}\n\n`)));
    const ours = await read(streamProxy(getModel("openai", "gpt-4o-mini"), { messages: [] }, { authToken: "token", proxyUrl }));
    expect(ours.types).toEqual(["start", "error"]);
    expect(ours.message).toMatchObject({ stopReason: "error", errorMessage: "The proxy sent text_start for content 1000000000, which is no index of its 0 blocks or the next", content: [] });
  });

  // Ours pushed `undefined` into the stream, which ended it with "Cannot read properties of undefined".
  it("leaves out an event type it does not know, as the reference does, and says so when an event is not an object", async () => {
    const withUnknown = [script[0], { type: "usage_update", tokens: 3 }, ...script.slice(1)];
    const proxyUrl = await serve(200, (write) => withUnknown.forEach((event) => write(`data: ${JSON.stringify(event)}\n\n`)));
    const model = getModel("openai", "gpt-4o-mini");
    const ours = await read(streamProxy(model, { messages: [] }, { authToken: "token", proxyUrl }));
    const theirs = await read(Reference.streamProxy(model, { messages: [] }, { authToken: "token", proxyUrl }));
    expect(ours.types).toEqual(theirs.types);
    expect(ours.message).toMatchObject({ stopReason: "toolUse", content: [{ type: "text", text: "Hello" }, { type: "toolCall", arguments: { path: "a.txt" } }] });

    server!.close();
    const nullUrl = await serve(200, (write) => ["start", null].forEach((event) => write(`data: ${JSON.stringify(event === "start" ? { type: "start" } : event)}\n\n`)));
    const failed = await read(streamProxy(model, { messages: [] }, { authToken: "token", proxyUrl: nullUrl }));
    expect(failed.types).toEqual(["start", "error"]);
    expect(failed.message).toMatchObject({ stopReason: "error", errorMessage: "The proxy sent an event that is not an object: null" });
  });

  it("an HTTP error from the proxy ends as an error message that quotes it", async () => {
    const proxyUrl = await serve(401, (write) => write(JSON.stringify({ error: "bad token" })));
    const ours = await read(streamProxy(getModel("openai", "gpt-4o-mini"), { messages: [] }, { authToken: "x", proxyUrl }));
    expect(ours.types).toEqual(["error"]);
    expect(ours.message).toMatchObject({ stopReason: "error", errorMessage: "Proxy error: bad token" });
  });

  it(
    "gives the deltas it rebuilds one hidden class, also once optimized (one per event the proxy sends)",
    () => {
      const result = runWithHiddenClassProbe(
        `const { applyProxyEvent } = await import(${sourceUrl("pi-agent-core/proxy.ts")});
const message = { role: "assistant", content: [], api: "a", provider: "p", model: "m", usage: {}, stopReason: "stop", timestamp: 0 };
const rawArguments = new Map();
applyProxyEvent({ type: "text_start", contentIndex: 0 }, message, rawArguments);
const events: object[] = [];
// Each event through JSON, as the proxy's stream is read.
const applySome = () => { for (let index = 0; index < 40; index++) events.push(applyProxyEvent(JSON.parse('{"type":"text_delta","contentIndex":0,"delta":"w"}'), message, rawArguments)); };
optimizeNow(applyProxyEvent, applySome);
const [first, second] = events.slice(-2);
console.log(JSON.stringify({ keys: Object.keys(second!), sameHiddenClass: sameHiddenClass(first!, second!) }));
`,
      );
      expect(result.stderr).toBe("");
      expect(JSON.parse(result.stdout)).toEqual({ keys: ["type", "contentIndex", "delta", "partial"], sameHiddenClass: true });
    },
    FRESH_PROCESS_TIMEOUT_MS,
  );
});
