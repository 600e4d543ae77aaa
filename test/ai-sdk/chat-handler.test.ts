import { Type } from "@sinclair/typebox";
import { asyncScheduler, filter, firstValueFrom } from "rxjs";
import { DefaultChatTransport, type UIMessageChunk } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { Agent, defineTool } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { chatBody, chunksOf, deleteFile, finalMessage, postJson, startChatServer } from "./chat-server.js";

const LONG_REPLY = "word ".repeat(2000);

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function serve(...args: Parameters<typeof startChatServer>) {
  const started = await startChatServer(...args);
  close = started.close;
  return started;
}

describe("createChatHandler on Node's HTTP server", () => {
  it("answers useChat's POST with the UI message stream, and a second POST continues the same chat", async () => {
    const model = scriptedModel(["Hello!", "You said hi before."]);
    const { url, handler } = await serve({ createAgent: () => new Agent({ model }) });
    const first = await postJson(`${url}/api/chat`, chatBody("chat-1", "hi"));
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("text/event-stream");
    expect(first.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect((await finalMessage(await chunksOf(first))).parts).toStrictEqual([{ type: "step-start" }, { type: "text", text: "Hello!", state: "done" }]);
    const second = await postJson(`${url}/api/chat`, chatBody("chat-1", "again"));
    expect((await finalMessage(await chunksOf(second))).parts).toStrictEqual([{ type: "step-start" }, { type: "text", text: "You said hi before.", state: "done" }]);
    // The second call saw the whole chat, kept by the agent.
    expect(model.calls[1]!.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(handler.chatIds()).toEqual(["chat-1"]);
  });

  it("aborts the run when the client goes away (useChat's stop())", async () => {
    const agent = new Agent({ model: scriptedModel([LONG_REPLY], { scheduler: asyncScheduler, delay: 5 }) });
    const { url } = await serve({ createAgent: () => agent });
    const ended = firstValueFrom(agent.events$.pipe(filter((event) => event.type === "agent_end")));
    const stop = new AbortController();
    const response = await postJson(`${url}/api/chat`, chatBody("chat-1", "talk"), { signal: stop.signal });
    const reader = response.body!.getReader();
    await reader.read();
    stop.abort();
    expect((await ended).reason).toBe("aborted");
  });

  it("lets a run go on without its client when abortOnDisconnect is false, and resumes it from its start (GET …/stream)", async () => {
    // The tool holds the run open until the resumed stream is there, however slow the machine.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const wait = defineTool({
      name: "wait",
      description: "Waits",
      parameters: Type.Object({}),
      execute: async () => (await gate, { content: [{ type: "text", text: "waited" }], details: {} }),
    });
    const agent = new Agent({ model: scriptedModel([{ content: [{ type: "toolCall", id: "call_wait", name: "wait", arguments: {} }] }, "one two three"]), tools: [wait] });
    const { url } = await serve({ createAgent: () => agent, abortOnDisconnect: false });
    const stop = new AbortController();
    const response = await postJson(`${url}/api/chat`, chatBody("chat-1", "count"), { signal: stop.signal });
    await response.body!.getReader().read();
    stop.abort();
    // As useChat({ resume: true }) asks: its transport's own reconnect URL and parsing.
    const transport = new DefaultChatTransport({ api: `${url}/api/chat` });
    const resumed = await transport.reconnectToStream({ chatId: "chat-1" });
    open();
    const chunks: UIMessageChunk[] = [];
    const reader = resumed!.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
    const message = await finalMessage(chunks);
    expect(message.parts).toStrictEqual([
      { type: "step-start" },
      { type: "tool-wait", toolCallId: "call_wait", state: "output-available", input: {}, output: { content: [{ type: "text", text: "waited" }], details: {} } },
      { type: "step-start" },
      { type: "text", text: "one two three", state: "done" },
    ]);
    expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
    // Nothing in flight: 204, which the transport reads as nothing to resume.
    expect(await transport.reconnectToStream({ chatId: "chat-1" })).toBeNull();
  });

  it("takes steering and approvals through POST …/commands", async () => {
    let steered!: () => void;
    const steeredOnce = new Promise<void>((resolve) => (steered = resolve));
    const model = scriptedModel([
      { content: [{ type: "toolCall", id: "call_delete", name: "delete_file", arguments: { path: "notes.txt" } }] },
      (context) => (JSON.stringify(context.messages).includes("in French") ? "Supprimé." : "Deleted."),
    ]);
    const agent = new Agent({ model, tools: [deleteFile] });
    const { url } = await serve({ createAgent: () => agent });
    agent.events$.pipe(filter((event) => event.type === "tool_approval_start")).subscribe(() => steered());
    const answer = postJson(`${url}/api/chat`, chatBody("chat-1", "delete notes.txt"));
    await steeredOnce;
    expect((await postJson(`${url}/api/chat/chat-1/commands`, JSON.stringify({ type: "steer", text: "answer in French" }))).status).toBe(204);
    expect((await postJson(`${url}/api/chat/chat-1/commands`, JSON.stringify({ type: "approve", toolCallId: "call_delete" }))).status).toBe(204);
    const message = await finalMessage(await chunksOf(await answer));
    expect(message.parts).toStrictEqual([
      { type: "step-start" },
      { type: "tool-delete_file", toolCallId: "call_delete", state: "output-available", input: { path: "notes.txt" }, output: { content: [{ type: "text", text: "deleted notes.txt" }], details: {} } },
      { type: "data-tool-approval", id: "call_delete", data: { toolCallId: "call_delete", toolName: "delete_file", input: { path: "notes.txt" }, state: "approved" } },
      { type: "step-start" },
      { type: "data-user-message", id: "user-1", data: { text: "answer in French" } },
      { type: "text", text: "Supprimé.", state: "done" },
    ]);
    // The approval is answered: a second one is refused with why.
    const again = await postJson(`${url}/api/chat/chat-1/commands`, JSON.stringify({ type: "approve", toolCallId: "call_delete" }));
    expect(again.status).toBe(409);
  });

  it("holds at most maxChats: a new chat evicts the least recently used idle one, or gets 503 while every chat runs", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wait = defineTool({ name: "wait", description: "Waits", parameters: Type.Object({}), execute: async () => (await gate, { content: [{ type: "text", text: "ok" }], details: {} }) });
    const closed: string[] = [];
    const { url, handler } = await serve({
      maxChats: 1,
      createAgent: () => new Agent({ model: scriptedModel([{ content: [{ type: "toolCall", id: "call_wait", name: "wait", arguments: {} }] }, "done", "again"]), tools: [wait] }),
      onChatClose: (chatId) => closed.push(chatId),
    });
    const running = await postJson(`${url}/api/chat`, chatBody("first", "go"));
    const refused = await postJson(`${url}/api/chat`, chatBody("second", "go"));
    expect({ status: refused.status, text: await refused.text() }).toStrictEqual({ status: 503, text: "The server holds 1 chats, each with a run going: try again later." });
    release();
    await running.text();
    const second = await postJson(`${url}/api/chat`, chatBody("second", "go"));
    expect(second.status).toBe(200);
    await second.text();
    expect({ closed, chats: handler.chatIds() }).toStrictEqual({ closed: ["first"], chats: ["second"] });
  });
});
