import { Type } from "@sinclair/typebox";
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { asyncScheduler, filter, firstValueFrom, lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { SLOW_READER_TEXT, toServerSentEvents, toUIMessageChunks, toUIMessageStream } from "../../src/ai-sdk/index.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { emptyUsage } from "../../src/types/messages.js";
import { arbitraryModel } from "../reliability/arbitrary-model.js";
import { userMessage } from "../testing/fixtures.js";

const add = defineTool({
  name: "add",
  description: "Adds two numbers",
  parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
  execute: async (_id, { a, b }) => ({ content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } }),
});

const work = defineTool({ name: "work", description: "Work.", parameters: Type.Object({ n: Type.Number() }), execute: (_toolCallId, args) => textResult(String(args.n)) });

const broken = defineTool({
  name: "broken",
  description: "Always fails",
  parameters: Type.Object({}),
  execute: async () => {
    throw new Error("the disk is full");
  },
});

/**
 * Every UIMessage readUIMessageStream makes of the stream, the last the final one, each as JSON
 * would carry it (the reader leaves unset fields as explicit `undefined`s).
 */
async function readMessages(stream: ReadableStream<UIMessageChunk>): Promise<UIMessage[]> {
  const messages: UIMessage[] = [];
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) messages.push(JSON.parse(JSON.stringify(message)) as UIMessage);
  return messages;
}

describe("toUIMessageStream read back by ai's readUIMessageStream", () => {
  it("gives one assistant message with the run's reasoning, text and each tool call with its input and output", async () => {
    const model = scriptedModel([
      {
        content: [
          { type: "thinking", thinking: "I should add and also try the broken tool." },
          { type: "text", text: "Let me add them." },
          { type: "toolCall", id: "call_add", name: "add", arguments: { a: 2, b: 3 } },
          { type: "toolCall", id: "call_broken", name: "broken", arguments: {} },
        ],
      },
      "2 + 3 is 5; the other tool failed.",
    ]);
    const agent = new Agent({ model, tools: [add, broken] });
    const messages = await readMessages(toUIMessageStream(agent.prompt("add 2 and 3"), { messageId: "reply-1" }));
    const final = messages[messages.length - 1]!;
    expect(final).toStrictEqual({
      id: "reply-1",
      role: "assistant",
      metadata: { reason: "idle", usage: agent.state.usage },
      parts: [
        { type: "step-start" },
        // ai 5 keeps the chunk id on a reasoning part (not on a text part).
        { type: "reasoning", id: "1-0", text: "I should add and also try the broken tool.", state: "done" },
        { type: "text", text: "Let me add them.", state: "done" },
        {
          type: "tool-add",
          toolCallId: "call_add",
          state: "output-available",
          input: { a: 2, b: 3 },
          output: { content: [{ type: "text", text: "5" }], details: { sum: 5 } },
        },
        { type: "tool-broken", toolCallId: "call_broken", state: "output-error", input: {}, errorText: "the disk is full" },
        { type: "step-start" },
        { type: "text", text: "2 + 3 is 5; the other tool failed.", state: "done" },
      ],
    });
  });

  it("streams a tool call's input as it is written, then its output, with toolOutput choosing what the part shows", async () => {
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "call_add", name: "add", arguments: { a: 1, b: 1 } }] }, "2"]);
    const agent = new Agent({ model, tools: [add] });
    const messages = await readMessages(toUIMessageStream(agent.prompt("1+1"), { messageId: "m", toolOutput: (result) => result.details }));
    const states = messages.flatMap((message) => message.parts.filter((part) => part.type === "tool-add").map((part) => ("state" in part ? part.state : undefined)));
    expect([...new Set(states)]).toEqual(["input-streaming", "input-available", "output-available"]);
    expect(messages[messages.length - 1]!.parts[1]).toStrictEqual({ type: "tool-add", toolCallId: "call_add", state: "output-available", input: { a: 1, b: 1 }, output: { sum: 2 } });
  });
});

describe("toUIMessageChunks", () => {
  it("maps a plain reply to the whole chunk sequence", async () => {
    const agent = new Agent({ model: scriptedModel([{ content: [{ type: "text", text: "Hi there" }], usage: { input: 3, output: 2 } }]) });
    const chunks = await lastValueFrom(agent.prompt("hello").pipe(toUIMessageChunks({ messageId: "m1", messageMetadata: (end) => ({ reason: end.reason }) }), toArray()));
    expect(chunks).toStrictEqual([
      { type: "start", messageId: "m1" },
      { type: "start-step" },
      { type: "text-start", id: "1-0" },
      { type: "text-delta", id: "1-0", delta: "Hi " },
      { type: "text-delta", id: "1-0", delta: "there" },
      { type: "text-end", id: "1-0" },
      { type: "finish-step" },
      { type: "finish", finishReason: "stop", messageMetadata: { reason: "idle" } },
    ]);
  });

  it("maps reasoning, a tool call's streamed input, its progress and output, and the run's usage to the whole chunk sequence", async () => {
    const count = defineTool({
      name: "count",
      description: "Counts up",
      parameters: Type.Object({ to: Type.Number() }),
      execute: async (_id, { to }, { update }) => {
        update({ content: [{ type: "text", text: "1" }], details: { at: 1 } });
        return { content: [{ type: "text", text: "1 2" }], details: { at: to } };
      },
    });
    const model = scriptedModel([
      { content: [{ type: "thinking", thinking: "Counting." }, { type: "toolCall", id: "call_count", name: "count", arguments: { to: 2 } }], usage: { input: 10, output: 4 } },
      { content: [{ type: "text", text: "Done." }], usage: { input: 20, output: 1 } },
    ]);
    const agent = new Agent({ model, tools: [count] });
    const chunks = await lastValueFrom(agent.prompt("count to 2").pipe(toUIMessageChunks({ messageId: "m1", toolOutput: (result) => result.details }), toArray()));
    expect(chunks).toStrictEqual([
      { type: "start", messageId: "m1" },
      { type: "start-step" },
      { type: "reasoning-start", id: "1-0" },
      { type: "reasoning-delta", id: "1-0", delta: "Counting." },
      { type: "reasoning-end", id: "1-0" },
      { type: "tool-input-start", toolCallId: "call_count", toolName: "count" },
      { type: "tool-input-delta", toolCallId: "call_count", inputTextDelta: '{"to":2}' },
      { type: "tool-input-available", toolCallId: "call_count", toolName: "count", input: { to: 2 } },
      { type: "tool-output-available", toolCallId: "call_count", output: { at: 1 }, preliminary: true },
      { type: "tool-output-available", toolCallId: "call_count", output: { at: 2 } },
      { type: "finish-step" },
      { type: "start-step" },
      { type: "text-start", id: "2-0" },
      { type: "text-delta", id: "2-0", delta: "Done." },
      { type: "text-end", id: "2-0" },
      { type: "finish-step" },
      // The default metadata: why the run ended and its tokens, summed over both model calls.
      { type: "finish", finishReason: "stop", messageMetadata: { reason: "idle", usage: expect.objectContaining({ input: 30, output: 5, totalTokens: 35 }) } },
    ]);
  });

  it("turns a run that failed outside the model (a hook threw) into an error chunk with why, and a finish with reason error", async () => {
    const agent = new Agent({
      model: scriptedModel(["Hi"]),
      shouldStopAfterTurn: () => {
        throw new Error("the hook broke");
      },
    });
    const chunks = await lastValueFrom(agent.prompt("hello").pipe(toUIMessageChunks({ messageId: "m1", messageMetadata: () => undefined }), toArray()));
    expect(chunks.slice(-3)).toStrictEqual([{ type: "finish-step" }, { type: "error", errorText: "shouldStopAfterTurn failed: the hook broke" }, { type: "finish", finishReason: "error" }]);
  });

  it("turns a failed model call into an error chunk and a finish with reason error", async () => {
    const agent = new Agent({ model: scriptedModel([{ stopReason: "error", errorMessage: "rate limited" }]) });
    const chunks = await lastValueFrom(agent.prompt("hello").pipe(toUIMessageChunks({ messageId: "m1", messageMetadata: () => undefined }), toArray()));
    expect(chunks).toStrictEqual([
      { type: "start", messageId: "m1" },
      { type: "start-step" },
      { type: "error", errorText: "rate limited" },
      { type: "finish-step" },
      { type: "finish", finishReason: "error" },
    ]);
  });

  it("closes the text an abort leaves open, and ends with abort rather than finish", async () => {
    const agent = new Agent({ model: scriptedModel([{ content: [{ type: "text", text: "one two three four" }], delay: 5 }], { scheduler: asyncScheduler }) });
    const chunks$ = agent.prompt("count").pipe(toUIMessageChunks({ messageId: "m1" }), toArray());
    const firstDelta = firstValueFrom(agent.events$.pipe(filter((event) => event.type === "message_update" && event.assistantMessageEvent.type === "text_delta")));
    void firstDelta.then(() => agent.abort());
    const chunks = await lastValueFrom(chunks$);
    expect(chunks.slice(0, 4)).toStrictEqual([{ type: "start", messageId: "m1" }, { type: "start-step" }, { type: "text-start", id: "1-0" }, { type: "text-delta", id: "1-0", delta: "one " }]);
    expect(chunks.slice(-3)).toStrictEqual([{ type: "text-end", id: "1-0" }, { type: "finish-step" }, { type: "abort" }]);
  });
});

describe("toUIMessageChunks of a provider's malformed stream", () => {
  const partial = (content: unknown[]) => ({ role: "assistant", content, api: "a", provider: "a", model: "a", usage: emptyUsage(), stopReason: "stop", timestamp: 0 });
  const call = { type: "toolCall", id: "c1", name: "work", arguments: { n: 1 } };

  // The reader fails the whole message on a delta or an end of a part it never saw.
  it("starts a part whose delta came first, and leaves out an end of a part never started", async () => {
    const events = [
      { type: "text_delta", contentIndex: 0, delta: "Hi", partial: partial([{ type: "text", text: "Hi" }]) },
      { type: "thinking_end", contentIndex: 4, content: "", partial: partial([{ type: "text", text: "Hi" }]) },
      { type: "toolcall_delta", contentIndex: 1, delta: '{"n":1}', partial: partial([{ type: "text", text: "Hi" }, { ...call, arguments: {} }]) },
      { type: "toolcall_delta", contentIndex: 7, delta: "x", partial: partial([{ type: "text", text: "Hi" }, { ...call, arguments: {} }]) },
      { type: "done", reason: "toolUse", message: { ...partial([{ type: "text", text: "Hi" }, call]), stopReason: "toolUse" } },
    ];
    const chunks = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [work] }, { model: arbitraryModel([{ events, end: "complete" }]) }).pipe(toUIMessageChunks({ messageId: "m1" }), toArray()));
    expect(chunks.slice(0, 9)).toStrictEqual([
      { type: "start", messageId: "m1" },
      { type: "start-step" },
      { type: "text-start", id: "1-0" },
      { type: "text-delta", id: "1-0", delta: "Hi" },
      { type: "tool-input-start", toolCallId: "c1", toolName: "work" },
      { type: "tool-input-delta", toolCallId: "c1", inputTextDelta: '{"n":1}' },
      { type: "text-end", id: "1-0" },
      { type: "tool-input-available", toolCallId: "c1", toolName: "work", input: { n: 1 } },
      { type: "tool-output-available", toolCallId: "c1", output: { content: [{ type: "text", text: "1" }], details: undefined } },
    ]);
    const message = (await readMessages(toUIMessageStream(agentLoop([userMessage("go")], { messages: [], tools: [work] }, { model: arbitraryModel([{ events, end: "complete" }]) })))).at(-1);
    expect(message?.parts.filter((part) => part.type !== "step-start").map((part) => [part.type, "state" in part ? part.state : undefined])).toStrictEqual([
      ["text", "done"],
      ["tool-work", "output-available"],
    ]);
  });

  // Its output came next, and the reader refused an output for a call it never saw.
  it("gives the input of each call a model sent only in its final message before the call's output", async () => {
    const events = [{ type: "done", reason: "toolUse", message: { ...partial([call]), stopReason: "toolUse" } }];
    const chunks = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [work] }, { model: arbitraryModel([{ events, end: "complete" }]) }).pipe(toUIMessageChunks({ messageId: "m1" }), toArray()));
    expect(chunks.slice(2, 4)).toStrictEqual([
      { type: "tool-input-available", toolCallId: "c1", toolName: "work", input: { n: 1 } },
      { type: "tool-output-available", toolCallId: "c1", output: { content: [{ type: "text", text: "1" }], details: undefined } },
    ]);
  });
});

describe("toServerSentEvents", () => {
  // JSON.stringify threw in the stream's transform: the response broke off mid-run.
  it("writes a tool's BigInt details as digits, and the stream ends as usual", async () => {
    const count = defineTool({ name: "count", description: "Counts", parameters: Type.Object({}), execute: () => ({ content: [{ type: "text", text: "many" }], details: { count: 10n } }) });
    const agent = new Agent({ model: scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name: "count", arguments: {} }] }, "Done."]), tools: [count] });
    const text = await new Response(toServerSentEvents(toUIMessageStream(agent.prompt("count"), { messageId: "m1" }))).text();
    expect(text).toContain('"details":{"count":"10"}');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  it("writes details whose toJSON throws as a note of why, and the stream ends as usual", async () => {
    const unwritable = {
      toJSON() {
        throw new Error("not today");
      },
    };
    const report = defineTool({ name: "report", description: "Reports", parameters: Type.Object({}), execute: () => ({ content: [{ type: "text", text: "done" }], details: { unwritable } }) });
    const agent = new Agent({ model: scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name: "report", arguments: {} }] }, "Done."]), tools: [report] });
    const text = await new Response(toServerSentEvents(toUIMessageStream(agent.prompt("report"), { messageId: "m1" }))).text();
    expect(text).toContain('"details":{"unwritable":"[unwritable: not today]"}');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });
});

describe("toUIMessageStream with a reader that does not keep up", () => {
  it("ends the stream with an error chunk once maxQueuedChunks wait, and stops reading the run", async () => {
    const deltas = Array.from({ length: 500 }, (_unused, index) => `word${index} `);
    const agent = new Agent({ model: scriptedModel([{ content: [{ type: "text", text: deltas.join("") }] }], { chunkSize: 6 }) });
    const stream = toUIMessageStream(agent.prompt("talk"), { messageId: "slow", maxQueuedChunks: 50 });
    // Nothing is read while the whole run streams: the scripted model emits it at once.
    await agent.waitForIdle();
    const chunks: UIMessageChunk[] = [];
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value as UIMessageChunk);
    expect(chunks.length).toBe(50);
    expect(chunks.at(-1)).toStrictEqual({ type: "error", errorText: SLOW_READER_TEXT });
    expect(chunks.filter((chunk) => chunk.type === "text-delta").length).toBeGreaterThan(40);
  });

  it("passes a run of the same size whole to a reader within the allowance", async () => {
    const deltas = Array.from({ length: 500 }, (_unused, index) => `word${index} `);
    const agent = new Agent({ model: scriptedModel([{ content: [{ type: "text", text: deltas.join("") }] }], { chunkSize: 6 }) });
    const messages = await readMessages(toUIMessageStream(agent.prompt("talk"), { messageId: "fast" }));
    expect(messages.at(-1)?.parts.find((part) => part.type === "text")).toMatchObject({ text: deltas.join("") });
  });
});
