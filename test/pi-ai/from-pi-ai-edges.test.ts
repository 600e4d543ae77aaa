import { type AssistantMessage as PiAiAssistantMessage, createAssistantMessageEventStream } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { fromPiAi } from "../../src/pi-ai/index.js";
import type { LlmContext } from "../../src/types.js";
import { assertModelEventGrammar, collectModelEvents, finalMessage } from "../helpers/model-event-grammar.js";
import { piAiTestModel, usageOf } from "../helpers/provider-fixtures.js";

const context: LlmContext = { messages: [{ role: "user", content: "Hi", timestamp: 1 }] };
const model = piAiTestModel({ source: "", api: "anthropic.messages", model: "claude-test", expected: {}, chunks: [] }, "http://127.0.0.1:9");
const signal = () => new AbortController().signal;

/** A message as pi-ai's providers keep it: one object, changed in place as the stream goes on. */
function liveMessage(): PiAiAssistantMessage {
  return { role: "assistant", content: [], api: "anthropic-messages", provider: "anthropic", model: "claude-test", usage: usageOf(0, 0, 0, 0, 0), stopReason: "stop", timestamp: 5 };
}

describe("fromPiAi at the edges of pi-ai's contract", () => {
  it("snapshots each event as it was, although pi-ai changes its message before the consumer reads the event", async () => {
    const adapted = fromPiAi(model, {
      apiKey: "test-key",
      stream: () => {
        const events = createAssistantMessageEventStream();
        const live = liveMessage();
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
        events.end();
        return events;
      },
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
