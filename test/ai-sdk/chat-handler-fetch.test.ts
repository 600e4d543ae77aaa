import { asyncScheduler, filter, firstValueFrom } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { type ChatHandler, createChatHandler, type ChatHandlerOptions, SLOW_READER_TEXT } from "../../src/ai-sdk/index.js";
import { Agent, type AgentEvent } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { chatBody, chunksOf, deleteFile, finalMessage } from "./chat-server.js";

type AgentEnd = Extract<AgentEvent, { type: "agent_end" }>;

/** About 2,000 words 2 ms apart: still streaming when a test acts on it, however loaded the machine. */
const LONG_REPLY = "word ".repeat(2000);

let handler: ChatHandler | undefined;
afterEach(async () => {
  await handler?.close();
  handler = undefined;
});

function chatHandler(options: ChatHandlerOptions): ChatHandler {
  handler = createChatHandler(options);
  return handler;
}

/** useChat's POST as a Fetch API `Request`, as a Next.js route, Deno or Bun hands it to `handler.fetch`. */
function chatRequest(chatId: string, text: string, init: RequestInit = {}): Request {
  return new Request("http://localhost/api/chat", { method: "POST", headers: { "content-type": "application/json" }, body: chatBody(chatId, text), ...init });
}

function commandRequest(chatId: string, command: object): Request {
  return new Request(`http://localhost/api/chat/${chatId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(command) });
}

function endOf(agent: Agent): Promise<AgentEnd> {
  return firstValueFrom(agent.events$.pipe(filter((event): event is AgentEnd => event.type === "agent_end")));
}

function longAgent(): Agent {
  return new Agent({ model: scriptedModel([LONG_REPLY], { scheduler: asyncScheduler, delay: 2 }) });
}

describe("createChatHandler through the Fetch API (Request → Response)", () => {
  it("aborts the run when the request's signal aborts (a Next.js route's client went away)", async () => {
    const agent = longAgent();
    const chat = chatHandler({ createAgent: () => agent });
    const ended = endOf(agent);
    const left = new AbortController();
    const response = await chat.fetch(chatRequest("chat-1", "talk", { signal: left.signal }));
    await response.body!.getReader().read();
    left.abort();
    expect((await ended).reason).toBe("aborted");
  });

  it("aborts the run when the response body is cancelled (Deno or Bun when the client goes away)", async () => {
    const agent = longAgent();
    const chat = chatHandler({ createAgent: () => agent });
    const ended = endOf(agent);
    const reader = (await chat.fetch(chatRequest("chat-1", "talk"))).body!.getReader();
    await reader.read();
    await reader.cancel();
    expect((await ended).reason).toBe("aborted");
  });

  it("aborts the run at once when the client left while createAgent was still making the agent", async () => {
    const agent = longAgent();
    let created!: () => void;
    const creating = new Promise<void>((resolve) => (created = resolve));
    const chat = chatHandler({ createAgent: () => creating.then(() => agent) });
    const ended = endOf(agent);
    const left = new AbortController();
    const answer = chat.fetch(chatRequest("chat-1", "talk", { signal: left.signal }));
    left.abort();
    created();
    await answer;
    expect((await ended).reason).toBe("aborted");
  });

  it("makes one agent for two first POSTs of the same chat that arrive while createAgent is still at work, and runs one of them", async () => {
    let created = 0;
    const chat = chatHandler({ createAgent: () => Promise.resolve().then(() => (created += 1, longAgent())) });
    const answers = await Promise.all([chat.fetch(chatRequest("chat-1", "one")), chat.fetch(chatRequest("chat-1", "two"))]);
    expect({ created, statuses: answers.map((answer) => answer.status).sort() }).toStrictEqual({ created: 1, statuses: [200, 409] });
    await Promise.all(answers.map((answer) => answer.body?.cancel()));
  });

  it("lets the run go on when a slow reader's stream is cut off (it may resume), though its client did not leave", async () => {
    const agent = new Agent({ model: scriptedModel(["word ".repeat(100)], { scheduler: asyncScheduler, delay: 1 }) });
    const chat = chatHandler({ createAgent: () => agent, chunks: { maxQueuedChunks: 20 } });
    const ended = endOf(agent);
    const response = await chat.fetch(chatRequest("chat-1", "talk"));
    // Nothing is read until the run has ended or been aborted.
    const end = await ended;
    const chunks = await chunksOf(response);
    expect(chunks.at(-1)).toStrictEqual({ type: "error", errorText: SLOW_READER_TEXT });
    expect(end.reason).toBe("idle");
  });
});

describe("an onChatClose that fails", () => {
  // Thrown, it made the evicting chat's POST a 500 and left the rest of close() undone; rejected, it
  // was an unhandled rejection, which ends the process.
  it.each(["throws", "rejects"] as const)("%s: is reported to onWarning, and eviction and close() go on", async (failure) => {
    const closed: string[] = [];
    const warnings: string[] = [];
    const chats = chatHandler({
      maxChats: 1,
      createAgent: () => new Agent({ model: scriptedModel(["fine"]) }),
      onChatClose: (chatId) => {
        closed.push(chatId);
        if (failure === "throws") throw new Error(`cannot save ${chatId}`);
        return Promise.reject(new Error(`cannot save ${chatId}`)) as never;
      },
      onWarning: (message) => warnings.push(message),
    });
    expect((await finalMessage(await chunksOf(await chats.fetch(chatRequest("a", "hi"))))).parts).toContainEqual({ type: "text", text: "fine", state: "done" });
    // Full: "a" is closed to make room for "b".
    expect((await finalMessage(await chunksOf(await chats.fetch(chatRequest("b", "hi"))))).parts).toContainEqual({ type: "text", text: "fine", state: "done" });
    await chats.close();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(closed).toEqual(["a", "b"]);
    expect(warnings).toEqual(["onChatClose failed: cannot save a", "onChatClose failed: cannot save b"]);
  });
});

describe("the chat handler's commands, through the Fetch API", () => {
  it("abort stops the run: its stream ends with an abort chunk", async () => {
    const agent = longAgent();
    const chat = chatHandler({ createAgent: () => agent });
    const [response, forked] = (await chat.fetch(chatRequest("chat-1", "talk"))).body!.tee();
    // The run is under way once its first bytes are out.
    await forked.getReader().read();
    expect((await chat.fetch(commandRequest("chat-1", { type: "abort" }))).status).toBe(204);
    const chunks = await chunksOf(new Response(response));
    expect(chunks.slice(-2)).toStrictEqual([{ type: "finish-step" }, { type: "abort" }]);
    expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
  });

  it("deny answers a waiting call with why, and follow_up runs after the reply, both shown in the message", async () => {
    const model = scriptedModel([
      { content: [{ type: "toolCall", id: "call_delete", name: "delete_file", arguments: { path: "notes.txt" } }] },
      "I did not delete it.",
      (context) => (JSON.stringify(context.messages.at(-1)).includes("now say bye") ? "Bye." : "no follow-up seen"),
    ]);
    const agent = new Agent({ model, tools: [deleteFile] });
    const chat = chatHandler({ createAgent: () => agent });
    const waiting = firstValueFrom(agent.events$.pipe(filter((event) => event.type === "tool_approval_start")));
    const response = chat.fetch(chatRequest("chat-1", "delete notes.txt"));
    await waiting;
    expect((await chat.fetch(commandRequest("chat-1", { type: "follow_up", text: "now say bye" }))).status).toBe(204);
    expect((await chat.fetch(commandRequest("chat-1", { type: "deny", toolCallId: "call_delete", reason: "keep my notes" }))).status).toBe(204);
    const message = await finalMessage(await chunksOf(await response));
    expect(message.parts).toStrictEqual([
      { type: "step-start" },
      { type: "tool-delete_file", toolCallId: "call_delete", state: "output-error", input: { path: "notes.txt" }, errorText: "Tool call was denied: keep my notes" },
      { type: "data-tool-approval", id: "call_delete", data: { toolCallId: "call_delete", toolName: "delete_file", input: { path: "notes.txt" }, state: "denied", reason: "Tool call was denied: keep my notes" } },
      { type: "step-start" },
      { type: "text", text: "I did not delete it.", state: "done" },
      { type: "step-start" },
      { type: "data-user-message", id: "user-1", data: { text: "now say bye" } },
      { type: "text", text: "Bye.", state: "done" },
    ]);
  });
});

