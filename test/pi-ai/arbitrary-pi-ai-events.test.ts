/**
 * A pi-ai stream function that sends anything (property-based): events of any type or none,
 * partials and final messages of any shape, content blocks that are not blocks, indexes out of
 * range, the live message changed between events, a stream that ends early or a function that
 * throws. `fromPiAi` gives a stream that keeps the ModelEvent grammar (its final message passed
 * on as pi-ai's, with content that is an array) with snapshots no later change touches, and an
 * agent run on it ends with `agent_end`, one result per call.
 */
import { type AssistantMessageEvent, createAssistantMessageEventStream } from "@mariozechner/pi-ai";
import fc from "fast-check";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { fromPiAi } from "../../src/pi-ai/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import type { LlmContext, Model } from "../../src/types.js";
import { assertModelEventGrammar, collectModelEvents } from "../helpers/model-event-grammar.js";
import { piAiTestModel } from "../helpers/provider-fixtures.js";
import { reply } from "../reliability/arbitrary-model.js";
import { userMessage } from "../testing/fixtures.js";
import { Type } from "@sinclair/typebox";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";

const context: LlmContext = { messages: [{ role: "user", content: "Hi", timestamp: 1 }] };
const piModel = piAiTestModel({ source: "", api: "anthropic.messages", model: "claude-test", expected: {}, chunks: [] }, "http://127.0.0.1:9");
const work = defineTool({ name: "work", description: "", parameters: Type.Object({ n: Type.Number() }), execute: (_id, { n }) => textResult(`did ${n}`) });

/** One step of a provider: an event for the live message (a block opened, grown or ended, pi-ai's way), or something else. */
const step = fc.oneof(
  fc.record({ kind: fc.constantFrom("open text", "open thinking", "open toolCall"), index: fc.oneof({ weight: 5, arbitrary: fc.constant("next") }, { weight: 1, arbitrary: fc.integer({ min: -1, max: 4 }) }) }),
  fc.record({ kind: fc.constant("delta"), index: fc.integer({ min: -1, max: 4 }), delta: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('{"n":', "1}", "Hi", "") }, { weight: 1, arbitrary: fc.constantFrom(0, null) }) }),
  fc.record({ kind: fc.constant("end"), index: fc.integer({ min: -1, max: 4 }), toolCall: fc.constantFrom("as streamed", "none", "not a call") }),
  fc.record({ kind: fc.constant("change the live message"), how: fc.constantFrom("clear its content", "drop its usage", "replace it with a number") }),
);
/** How the stream ends: pi-ai's done or error, one with no usable message, or none at all. */
const ending = fc.constantFrom("done", "error", "done with no message", "done with junk content", "no end");
const piAiReply = fc.oneof(
  { weight: 3, arbitrary: fc.record({ shaped: fc.constant(true), steps: fc.array(step, { maxLength: 10 }), ending }) },
  { weight: 1, arbitrary: reply.map((planned) => ({ shaped: false as const, ...planned })) },
);
type PiAiReply = typeof piAiReply extends fc.Arbitrary<infer T> ? T : never;

const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/** Plays `planned` into a pi-ai event stream on one live message, as pi-ai's providers do (or not). */
function play(planned: PiAiReply): ReturnType<typeof createAssistantMessageEventStream> {
  const events = createAssistantMessageEventStream();
  const push = (event: unknown) => events.push(event as AssistantMessageEvent);
  let live: Record<string, unknown> = { role: "assistant", content: [], api: "anthropic-messages", provider: "anthropic", model: "claude-test", usage: usage(), stopReason: "stop", timestamp: 5 };
  const content = () => (Array.isArray(live.content) ? (live.content as Array<Record<string, unknown>>) : []);
  if (!planned.shaped) {
    // The arbitrary model's events, each given the live message where it has no partial.
    for (const sent of planned.events) push(typeof sent === "object" && sent !== null && !("partial" in sent) ? { ...sent, partial: live } : sent);
  } else {
    push({ type: "start", partial: live });
    for (const each of planned.steps) {
      if (each.kind === "change the live message") {
        if (each.how === "clear its content") content().length = 0;
        else if (each.how === "drop its usage") delete live.usage;
        else live = 7 as unknown as Record<string, unknown>;
        continue;
      }
      if (each.kind === "open text" || each.kind === "open thinking" || each.kind === "open toolCall") {
        const type = each.kind.slice("open ".length);
        content().push(type === "text" ? { type, text: "" } : type === "thinking" ? { type, thinking: "" } : { type, id: "call_1", name: "work", arguments: {} });
        const index = each.index === "next" ? content().length - 1 : each.index;
        push({ type: `${type === "toolCall" ? "toolcall" : type}_start`, contentIndex: index, partial: live });
        continue;
      }
      const block = content()[each.index as number];
      const prefix = block?.type === "toolCall" ? "toolcall" : block?.type === "thinking" ? "thinking" : "text";
      if (each.kind === "delta") {
        if (block?.type === "text" && typeof each.delta === "string") block.text = `${block.text as string}${each.delta}`;
        if (block?.type === "thinking" && typeof each.delta === "string") block.thinking = `${block.thinking as string}${each.delta}`;
        push({ type: `${prefix}_delta`, contentIndex: each.index, delta: each.delta, partial: live });
      } else if (each.kind === "end") {
        const toolCall = each.toolCall === "as streamed" ? { ...block, arguments: { n: 1 } } : each.toolCall === "none" ? undefined : 0;
        push({ type: `${prefix}_end`, contentIndex: each.index, content: block?.text ?? block?.thinking, toolCall, partial: live });
      }
    }
    if (planned.ending === "done") push({ type: "done", reason: "toolUse", message: { ...live, stopReason: "toolUse" } });
    else if (planned.ending === "error") push({ type: "error", reason: "error", error: { ...live, stopReason: "error", errorMessage: "overloaded" } });
    else if (planned.ending === "done with no message") push({ type: "done", reason: "stop", message: "gone" });
    else if (planned.ending === "done with junk content") push({ type: "done", reason: "stop", message: { ...live, content: [null, 3, { type: "hologram" }] } });
  }
  events.end();
  return events;
}

/** `fromPiAi` over stream functions that replay `replies`, one per call; a call past them gets a plain reply. */
function piAiModel(replies: PiAiReply[]): Model {
  let call = 0;
  return fromPiAi(piModel, {
    apiKey: "test-key",
    stream: () => {
      const planned = replies[call++] ?? { shaped: true, steps: [], ending: "done" };
      if (!planned.shaped && planned.end === "throw before streaming") throw new Error("the provider failed before streaming");
      return play(planned);
    },
  });
}

describe("a pi-ai stream function that sends anything, through fromPiAi (property-based)", () => {
  it("keeps the ModelEvent grammar with snapshots later changes do not touch", async () => {
    await fc.assert(
      fc.asyncProperty(piAiReply, async (planned) => {
        const { events, copies } = await collectModelEvents(piAiModel([planned]).stream(context, { signal: new AbortController().signal }));
        assertModelEventGrammar(events, copies, { finalMessageChecked: false });
        const last = events.at(-1)!;
        const final = last.type === "done" ? last.message : last.type === "error" ? last.error : undefined;
        expect(Array.isArray(final?.content)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("ends every run with agent_end and one result per call", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(piAiReply, { maxLength: 3 }), async (replies) => {
        const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [work] }, { model: piAiModel(replies), maxTurns: 6 }).pipe(toArray()));
        assertEventGrammar(events);
        expect(events.at(-1)?.type).toBe("agent_end");
        expect(() => JSON.stringify(events)).not.toThrow();
      }),
      { numRuns: 150 },
    );
  });
});
