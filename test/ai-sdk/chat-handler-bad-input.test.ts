import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { asyncScheduler } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { chatBody, chunksOf, finalMessage, postJson, startChatServer } from "./chat-server.js";

/** Each bad request gets a clear 4xx; after all of them, the same server still answers a good one. */
describe("the chat handler's answers to bad requests", () => {
  let server: Awaited<ReturnType<typeof startChatServer>>;
  let created: string[];

  beforeAll(async () => {
    created = [];
    server = await startChatServer({
      maxBodyBytes: 10_000,
      createAgent: (chatId) => {
        if (chatId.startsWith("unknown")) return undefined;
        if (chatId === "throws") throw new Error("no model configured");
        if (chatId === "not-an-agent") return { prompt: () => undefined } as unknown as Agent;
        created.push(chatId);
        return new Agent({ model: scriptedModel(chatId === "slow" ? [{ content: [{ type: "text", text: "a b c" }], delay: 2000 }] : ["fine"], { scheduler: asyncScheduler }) });
      },
    });
  });
  afterAll(() => server.close());

  const post = (body: string, path = "/api/chat", init: RequestInit = {}) => postJson(`${server.url}${path}`, body, init);
  async function expectRefusal(response: Response, status: number, message: string | RegExp): Promise<void> {
    expect({ status: response.status, type: response.headers.get("content-type") }).toStrictEqual({ status, type: "text/plain; charset=utf-8" });
    expect(await response.text()).toMatch(message);
  }

  it("refuses a body that is not JSON, not an object, or not useChat's", async () => {
    await expectRefusal(await post("{not json"), 400, "The body is not JSON: send useChat's { id, messages }.");
    await expectRefusal(await post("[1,2]"), 400, "The body must be a JSON object: useChat's { id, messages }.");
    await expectRefusal(await post(JSON.stringify({ messages: [] })), 400, /^The chat "id" must be 1 to 128 characters/);
    await expectRefusal(await post(JSON.stringify({ id: "../etc", messages: [] })), 400, /^The chat "id" must be/);
    await expectRefusal(await post(JSON.stringify({ id: "a", messages: [] })), 400, '"messages" must be a non-empty array of UI messages.');
    await expectRefusal(await post(JSON.stringify({ id: "a", messages: [{ role: "assistant", parts: [] }] })), 400, "The last message must be a user message with parts.");
    await expectRefusal(await post(JSON.stringify({ id: "a", messages: [{ role: "user", parts: [{ type: "file", url: "x" }] }] })), 400, "The last user message has no text part.");
    await expectRefusal(await post(JSON.stringify({ id: "a", messages: [{ role: "user", parts: [{ type: "text", text: "x" }] }], trigger: "regenerate-message" })), 400, /^trigger "regenerate-message" is not supported/);
    // Was a 500 ("Cannot convert object to primitive value"), and a long trigger came back whole.
    await expectRefusal(await post(JSON.stringify({ id: "a", messages: [{ role: "user", parts: [{ type: "text", text: "x" }] }], trigger: { toString: 1 } })), 400, /^trigger of type object is not supported/);
    await expectRefusal(await post(JSON.stringify({ id: "a", messages: [], trigger: "x".repeat(5000) })), 400, new RegExp(`^trigger "${"x".repeat(64)}"… is not supported`));
    expect(created).toEqual([]);
  });

  it("refuses a body that is not sent as JSON (what another site's form or plain-text POST would be)", async () => {
    await expectRefusal(await fetch(`${server.url}/api/chat`, { method: "POST", headers: { "content-type": "text/plain" }, body: chatBody("a", "hi") }), 415, "Send the body as application/json.");
  });

  it("refuses a huge body, declared or streamed without a length, before reading it all", async () => {
    await expectRefusal(await post(chatBody("a", "x".repeat(20_000))), 413, "The body is larger than 10000 bytes.");
    // Chunked, no content-length: counted as it arrives.
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${server.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json", "transfer-encoding": "chunked" } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("error", reject);
      for (let index = 0; index < 30; index += 1) request.write("x".repeat(1000));
      request.end();
    });
    expect(status).toBe(413);
  });

  it("answers 404 for a chat createAgent refuses, or commands to one never created (204 to resume it), and 500 with why when createAgent throws", async () => {
    await expectRefusal(await post(chatBody("unknown-1", "hi")), 404, 'No chat "unknown-1" here, and the server would not create it.');
    // Nothing to resume rather than 404: useChat({ resume: true }) asks for every chat it opens, a new one too.
    expect((await fetch(`${server.url}/api/chat/never/stream`)).status).toBe(204);
    await expectRefusal(await post(JSON.stringify({ type: "abort" }), "/api/chat/never/commands"), 404, 'No chat "never" here.');
    await expectRefusal(await post(chatBody("throws", "hi")), 500, "createAgent failed: no model configured");
    // Before, its first use failed with a TypeError that named neither createAgent nor the Agent.
    await expectRefusal(await post(chatBody("not-an-agent", "hi")), 500, "createAgent failed: it returned an object without subscribe(), not an Agent.");
  });

  it("answers 405 for a wrong method, 404 past its routes, and leaves other paths to the server", async () => {
    await expectRefusal(await fetch(`${server.url}/api/chat`), 405, "Use POST here.");
    await expectRefusal(await post("{}", "/api/chat/a/stream"), 405, "Use GET here.");
    expect(await (await fetch(`${server.url}/api/chat/a/b/c`)).text()).toBe("The server's own 404");
    expect(await (await fetch(`${server.url}/elsewhere`)).text()).toBe("The server's own 404");
  });

  it("refuses a second prompt while the chat's run goes on, and bad commands", async () => {
    const running = post(chatBody("slow", "go"));
    await running;
    await expectRefusal(await post(chatBody("slow", "again")), 409, /^Chat "slow" has a run going: wait for it, resume it \(GET \/api\/chat\/slow\/stream\)/);
    await expectRefusal(await post("nope", "/api/chat/slow/commands"), 400, /^The body is not JSON/);
    await expectRefusal(await post(JSON.stringify({ type: "explode" }), "/api/chat/slow/commands"), 400, 'Unknown command "type": one of steer, follow_up, approve, deny, abort.');
    await expectRefusal(await post(JSON.stringify({ type: "steer" }), "/api/chat/slow/commands"), 400, '"steer" needs a non-empty "text".');
    await expectRefusal(await post(JSON.stringify({ type: "approve", toolCallId: "call_none" }), "/api/chat/slow/commands"), 409, /call_none/);
    expect((await post(JSON.stringify({ type: "abort" }), "/api/chat/slow/commands")).status).toBe(204);
    // The abort command stopped the run (its reply would take 2 s an event).
    expect((await chunksOf(await running)).at(-1)).toStrictEqual({ type: "abort" });
  });

  // A throw while turning the request into a Fetch API `Request` came out of Node's HTTP parser as
  // an uncaught exception: one unauthenticated request of a few bytes ended the process.
  it("answers what the Fetch API cannot carry (TRACE, a Host that is not a host, an id that is not percent-encoding)", async () => {
    expect(await rawExchange(server.url, "TRACE /api/chat HTTP/1.1\r\nHost: localhost\r\n\r\n")).toMatch(/^HTTP\/1\.1 405 [^]*\r\nallow: GET, POST\r\n[^]*TRACE is not supported here\.\r\n/);
    expect(await rawExchange(server.url, "GET /api/chat/a/stream HTTP/1.1\r\nHost: [\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 [^]*The Host header is not a host\.\r\n/);
    await expectRefusal(await fetch(`${server.url}/api/chat/%E0%A4/stream`), 400, "Not a chat id.");
    await expectRefusal(await post(JSON.stringify({ type: "abort" }), "/api/chat/%E0%A4/commands"), 404, 'No chat "%E0%A4" here.');
  });

  it("still serves a good request after all of the above", async () => {
    const message = await finalMessage(await chunksOf(await post(chatBody("good", "hi"))));
    expect(message.parts).toStrictEqual([{ type: "step-start" }, { type: "text", text: "fine", state: "done" }]);
  });
});

/** Sends `request` as it is on a fresh connection (which it then closes) and returns the whole answer. */
function rawExchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    const received: Buffer[] = [];
    socket.on("data", (chunk) => received.push(chunk));
    socket.on("end", () => resolve(Buffer.concat(received).toString()));
    socket.on("error", reject);
  });
}
