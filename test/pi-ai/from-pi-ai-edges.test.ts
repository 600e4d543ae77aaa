import { type AssistantMessage as PiAiAssistantMessage, type AssistantMessageEvent, type Context, createAssistantMessageEventStream } from "@mariozechner/pi-ai";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { fromPiAi } from "../../src/pi-ai/index.js";
import type { LlmContext } from "../../src/types.js";
import { contentLength, isPendingSnapshot } from "../../src/util/shared-content.js";
import { assertModelEventGrammar, collectModelEvents, finalMessage } from "../helpers/model-event-grammar.js";
import { piAiTestModel, usageOf } from "../helpers/provider-fixtures.js";

const context: LlmContext = { messages: [{ role: "user", content: "Hi", timestamp: 1 }] };
const model = piAiTestModel({ source: "", api: "anthropic.messages", model: "claude-test", expected: {}, chunks: [] }, "http://127.0.0.1:9");
const signal = () => new AbortController().signal;

/** A message as pi-ai's providers keep it: one object, changed in place as the stream goes on. */
function liveMessage(): PiAiAssistantMessage {
  return { role: "assistant", content: [], api: "anthropic-messages", provider: "anthropic", model: "claude-test", usage: usageOf(0, 0, 0, 0, 0), stopReason: "stop", timestamp: 5 };
}

/** `fromPiAi` over a pi-ai stream that `push` fills at once, on one live message, and then ends. */
function replaying(push: (events: ReturnType<typeof createAssistantMessageEventStream>, live: PiAiAssistantMessage) => void) {
  return fromPiAi(model, {
    apiKey: "test-key",
    stream: () => {
      const events = createAssistantMessageEventStream();
      push(events, liveMessage());
      events.end();
      return events;
    },
  });
}

describe("fromPiAi at the edges of pi-ai's contract", () => {
  it("snapshots each event as it was, although pi-ai changes its message before the consumer reads the event", async () => {
    const adapted = replaying((events, live) => {
      // Everything is pushed at once, as a provider does with several SSE frames in one read.
      events.push({ type: "start", partial: live });
      const block = { type: "text" as const, text: "" };
      live.content.push(block);
      events.push({ type: "text_start", contentIndex: 0, partial: live });
      for (const word of ["Hello", " there"]) {
        block.text += word;
        events.push({ type: "text_delta", contentIndex: 0, delta: word, partial: live });
      }
      events.push({ type: "text_end", contentIndex: 0, content: block.text, partial: live });
      live.usage = usageOf(3, 2, 0, 0, 5);
      events.push({ type: "done", reason: "stop", message: live });
    });
    const { events, copies } = await collectModelEvents(adapted.stream(context, { signal: signal() }));
    assertModelEventGrammar(events, copies);
    expect(events.map((event) => ("partial" in event ? event.partial.content : []))).toStrictEqual([
      [],
      [{ type: "text", text: "" }],
      [{ type: "text", text: "Hello" }],
      [{ type: "text", text: "Hello there" }],
      [{ type: "text", text: "Hello there" }],
      [],
    ]);
    expect(finalMessage(events)).toStrictEqual({ ...liveMessage(), content: [{ type: "text", text: "Hello there" }], usage: usageOf(3, 2, 0, 0, 5) });
  });

  it("shares the content of a long reply between snapshots: 1,000 tool calls copy no block past the 128th", async () => {
    const calls = 1_000;
    const adapted = replaying((events, live) => {
      events.push({ type: "start", partial: live });
      for (let index = 0; index < calls; index++) {
        const call = { type: "toolCall" as const, id: `c${index}`, name: "f", arguments: {} };
        live.content.push(call);
        events.push({ type: "toolcall_start", contentIndex: index, partial: live });
        events.push({ type: "toolcall_delta", contentIndex: index, delta: `{"n":${index}}`, partial: live });
        const ended = { ...call, arguments: { n: index } };
        live.content[index] = ended;
        events.push({ type: "toolcall_end", contentIndex: index, toolCall: ended, partial: live });
      }
      live.stopReason = "toolUse";
      events.push({ type: "done", reason: "toolUse", message: live });
    });
    const events = await lastValueFrom(adapted.stream(context, { signal: signal() }).pipe(toArray()));
    const partials = events.flatMap((event) => ("partial" in event ? [event.partial] : []));
    // Blocks copied into content arrays made for the snapshots (a long one's array is built when read).
    const copied = partials.reduce((total, partial) => total + (isPendingSnapshot(partial) ? 0 : contentLength(partial)), 0);

    // Why: each event's snapshot copied the whole content: 1,501,500 block copies here, n² for n
    // calls. Now a snapshot of fewer than 128 blocks is a copy (3 per call), a longer one shared.
    expect(copied).toBe(3 * ((127 * 128) / 2));
    // Read after the whole reply: each snapshot kept the blocks it saw.
    const ended = (count: number) => Array.from({ length: count }, (_unused, index) => ({ type: "toolCall", id: `c${index}`, name: "f", arguments: { n: index } }));
    for (const call of [0, 127, 128, 999]) {
      expect(partials[1 + 3 * call]?.content).toStrictEqual([...ended(call), { type: "toolCall", id: `c${call}`, name: "f", arguments: {} }]);
      expect(partials[3 + 3 * call]?.content).toStrictEqual(ended(call + 1));
    }
    expect(finalMessage(events).content).toStrictEqual(ended(calls));
  });

  it("guesses long streamed arguments at the draft's cadence, each character read once: 1 MB in 1 KB deltas makes 12 guesses, not 1,024 parses of the text so far", async () => {
    const value = { rows: Array.from({ length: 9_000 }, (_unused, index) => ({ index, text: "x".repeat(100) })) };
    const text = JSON.stringify(value);
    const deltas = Array.from({ length: Math.ceil(text.length / 1024) }, (_unused, index) => text.slice(index * 1024, (index + 1) * 1024));
    const adapted = replaying((events, live) => {
      events.push({ type: "start", partial: live });
      live.content.push({ type: "toolCall", id: "c1", name: "f", arguments: {} });
      events.push({ type: "toolcall_start", contentIndex: 0, partial: live });
      for (const delta of deltas) events.push({ type: "toolcall_delta", contentIndex: 0, delta, partial: live });
      const ended = { type: "toolCall" as const, id: "c1", name: "f", arguments: value };
      live.content[0] = ended;
      events.push({ type: "toolcall_end", contentIndex: 0, toolCall: ended, partial: live });
      live.stopReason = "toolUse";
      events.push({ type: "done", reason: "toolUse", message: live });
    });
    const events = await lastValueFrom(adapted.stream(context, { signal: signal() }).pipe(toArray()));
    const guesses = events.flatMap((event) => (event.type === "toolcall_delta" && event.partial.content[0]?.type === "toolCall" ? [event.partial.content[0].arguments] : []));
    expect(guesses).toHaveLength(deltas.length);
    // Why: every fragment parsed the whole text so far, 1,024 parses here (time in the square of
    // the length). Now a new guess for each of the first 4 KiB, then each time the text doubled.
    const distinct = new Set(guesses);
    expect(distinct.size).toBe(4 + Math.floor(Math.log2(text.length / 4096)));
    expect(distinct.size).toBe(12);
    expect((guesses.at(-1) as typeof value).rows.length).toBeGreaterThan(value.rows.length / 2);
    expect((guesses.at(-1) as typeof value).rows.slice(0, 3)).toStrictEqual(value.rows.slice(0, 3));
    expect(finalMessage(events).content).toStrictEqual([{ type: "toolCall", id: "c1", name: "f", arguments: value }]);
  });

  it("a stream function that throws, and a stream that ends without done or error, end as error messages", async () => {
    const throwing = fromPiAi(model, { stream: () => { throw new Error("No API key for provider: anthropic"); } });
    const thrown = await collectModelEvents(throwing.stream(context, { signal: signal() }));
    assertModelEventGrammar(thrown.events);
    expect([thrown.events.map((event) => event.type), finalMessage(thrown.events).errorMessage]).toStrictEqual([["start", "error"], "No API key for provider: anthropic"]);

    const unfinished = fromPiAi(model, {
      stream: () => {
        const events = createAssistantMessageEventStream();
        const live = liveMessage();
        events.push({ type: "start", partial: live });
        live.content.push({ type: "text", text: "Par" });
        events.push({ type: "text_start", contentIndex: 0, partial: live });
        events.push({ type: "text_delta", contentIndex: 0, delta: "Par", partial: live });
        events.end();
        return events;
      },
    });
    const cut = await collectModelEvents(unfinished.stream(context, { signal: signal() }));
    assertModelEventGrammar(cut.events);
    expect(finalMessage(cut.events)).toStrictEqual({
      ...liveMessage(),
      content: [{ type: "text", text: "Par" }],
      stopReason: "error",
      errorMessage: "pi-ai's stream ended without a done or error event",
    });
  });

  // An index of 10^9 grew the shared content to it: the process ran out of memory.
  it("leaves out an event whose contentIndex is no index of the content or of the block after it", async () => {
    const stray = fromPiAi(model, {
      stream: () => {
        const events = createAssistantMessageEventStream();
        const live = liveMessage();
        events.push({ type: "start", partial: live });
        for (const contentIndex of [1e9, -1, 0.5, 2]) events.push({ type: "text_start", contentIndex, partial: live });
        events.push({ type: "toolcall_end", contentIndex: 1e9, toolCall: { type: "toolCall", id: "c1", name: "f", arguments: {} }, partial: live });
        live.content.push({ type: "text", text: "ok" });
        events.push({ type: "text_start", contentIndex: 0, partial: live });
        events.push({ type: "text_delta", contentIndex: 0, delta: "ok", partial: live });
        events.push({ type: "text_end", contentIndex: 0, content: "ok", partial: live });
        events.push({ type: "done", reason: "stop", message: { ...live, content: [{ type: "text", text: "ok" }] } });
        events.end();
        return events;
      },
    });
    const { events } = await collectModelEvents(stray.stream(context, { signal: signal() }));
    assertModelEventGrammar(events);
    expect(events.map((event) => event.type)).toStrictEqual(["start", "text_start", "text_delta", "text_end", "done"]);
  });

  // Each was passed on as it came (a second start, ends and deltas for no open block of their kind,
  // a call with no id), or threw inside the pump: the stream ended as an error with no content.
  it("passes on a stream that breaks pi-ai's grammar as one that keeps it, and loses none of what streamed", async () => {
    const broken = replaying((events, live) => {
      const push = (event: unknown) => events.push(event as AssistantMessageEvent);
      push({ type: "text_start", contentIndex: 0, partial: live });
      push({ type: "start", partial: live });
      live.content.push({ type: "text", text: "Hi" }, { type: "toolCall", id: "", name: "work", arguments: {} });
      push({ type: "text_delta", contentIndex: 0, delta: "Hi", partial: live });
      push({ type: "thinking_delta", contentIndex: 0, delta: "not thinking", partial: live });
      push({ type: "text_delta", contentIndex: 0, delta: 7, partial: live });
      push({ type: "toolcall_end", toolCall: 0, partial: live });
      push({ type: "text_end", contentIndex: 0, content: "Hi", partial: 7 });
      push({ type: "text_delta", contentIndex: 0, delta: " again", partial: live });
      push({ type: "toolcall_start", contentIndex: 1, partial: live });
      push({ type: "toolcall_delta", contentIndex: 1, delta: '{"n": 1}', partial: live });
      push({ type: "toolcall_end", contentIndex: 1, toolCall: "not a call", partial: live });
      push({ type: "done", reason: "toolUse", message: "gone" });
    });
    const { events, copies } = await collectModelEvents(broken.stream(context, { signal: signal() }));
    assertModelEventGrammar(events, copies, { finalMessageChecked: false });
    expect(events.map((event) => event.type)).toStrictEqual(["start", "text_start", "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_end", "error"]);
    const ended = events[6] as Extract<(typeof events)[number], { type: "toolcall_end" }>;
    expect(ended.toolCall).toMatchObject({ type: "toolCall", name: "work", arguments: { n: 1 } });
    expect(ended.toolCall.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(finalMessage(events)).toMatchObject({ stopReason: "error", errorMessage: "pi-ai's done event carried no message", content: [{ type: "text", text: "Hi" }, ended.toolCall] });
  });

  // pi-ai's providers send a result without its call as it is, which Anthropic and OpenAI refuse (HTTP 400).
  it("hands pi-ai the messages with each result paired with its call", async () => {
    let sent: Context | undefined;
    const adapted = fromPiAi(model, {
      stream: (_model, piAiContext) => {
        sent = piAiContext;
        const events = createAssistantMessageEventStream();
        events.push({ type: "done", reason: "stop", message: liveMessage() });
        events.end();
        return events;
      },
    });
    const orphan = { role: "toolResult" as const, toolCallId: "cut", toolName: "read", content: [{ type: "text" as const, text: "x" }], isError: false, timestamp: 1 };
    await collectModelEvents(adapted.stream({ messages: [orphan, ...context.messages] }, { signal: signal() }));
    expect(sent?.messages).toStrictEqual(context.messages);
  });

  it("a call's thinkingLevel becomes pi-ai's reasoning for that call, over the configured one; \"off\" sends none", async () => {
    const sent: unknown[] = [];
    const adapted = fromPiAi(model, {
      reasoning: "low",
      stream: (_model, _context, options) => {
        sent.push(options.reasoning);
        const events = createAssistantMessageEventStream();
        events.push({ type: "done", reason: "stop", message: liveMessage() });
        events.end();
        return events;
      },
    });
    await collectModelEvents(adapted.stream(context, { signal: signal(), thinkingLevel: "xhigh" }));
    await collectModelEvents(adapted.stream(context, { signal: signal(), thinkingLevel: "off" }));
    await collectModelEvents(adapted.stream(context, { signal: signal() }));
    expect(sent).toStrictEqual(["xhigh", undefined, "low"]);
  });
});
