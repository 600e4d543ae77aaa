import { describe, expect, it } from "vitest";
import type { ChatChunk } from "../../src/openai/chat-stream-accumulator.js";
import { ChatStreamAccumulator } from "../../src/openai/chat-stream-accumulator.js";
import { RequestAbortedError } from "../../src/openai/provider-errors.js";
import type { ModelEvent } from "../../src/types/model.js";
import { assertModelEventGrammar, finalMessage } from "../helpers/model-event-grammar.js";

function run(chunks: ChatChunk[], ending: "end" | Error = "end"): ModelEvent[] {
  const accumulator = new ChatStreamAccumulator({ api: "openai-completions", provider: "openai", model: "m", timestamp: 42 });
  const events = chunks.flatMap((chunk) => accumulator.push(chunk));
  events.push(...(ending === "end" ? accumulator.end() : accumulator.fail(ending)));
  // After the terminal event nothing more comes out.
  expect(accumulator.push({ choices: [{ index: 0, delta: { content: "late" } }] })).toStrictEqual([]);
  expect(accumulator.end()).toStrictEqual([]);
  assertModelEventGrammar(events);
  return events;
}

const delta = (value: ChatChunk["choices"] extends (infer C)[] | null | undefined ? C : never): ChatChunk => ({ id: "c1", model: "m", choices: [value] });

describe("ChatStreamAccumulator", () => {
  it("a tool-call header inside the role chunk, then fragments; no usage chunk", () => {
    const events = run([
      delta({ index: 0, delta: { role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "1}" } }] } }),
      delta({ index: 0, delta: {}, finish_reason: "tool_calls" }),
    ]);
    expect(finalMessage(events)).toMatchObject({
      stopReason: "toolUse",
      timestamp: 42,
      content: [{ type: "toolCall", id: "call_1", name: "f", arguments: { a: 1 } }],
      usage: { input: 0, output: 0, totalTokens: 0 },
    });
  });

  it("the same function twice in parallel, with interleaved fragments", () => {
    const events = run([
      delta({ index: 0, delta: { tool_calls: [{ index: 0, id: "call_a", function: { name: "weather", arguments: "" } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 1, id: "call_b", function: { name: "weather", arguments: "" } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: '{"city":"Rome"}' } }] } }),
      delta({ index: 0, delta: {}, finish_reason: "tool_calls" }),
    ]);
    expect(finalMessage(events).content).toStrictEqual([
      { type: "toolCall", id: "call_a", name: "weather", arguments: { city: "Oslo" } },
      { type: "toolCall", id: "call_b", name: "weather", arguments: { city: "Rome" } },
    ]);
  });

  it("a call whose arguments are whole ends when the next call starts, so an eager tool can start", () => {
    const events = run([
      delta({ index: 0, delta: { tool_calls: [{ index: 0, id: "call_a", function: { name: "search", arguments: '{"q":' } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 1, id: "call_b", function: { name: "read", arguments: '{"path"' } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: " " } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: ':"a"}' } }] } }),
      delta({ index: 0, delta: {}, finish_reason: "tool_calls" }),
    ]);
    expect(events.filter((event) => event.type !== "toolcall_delta").map((event) => event.type)).toStrictEqual([
      "start",
      "toolcall_start",
      "toolcall_end",
      "toolcall_start",
      "toolcall_end",
      "done",
    ]);
    expect(events.find((event) => event.type === "toolcall_end")).toMatchObject({ toolCall: { id: "call_a", arguments: { q: "x" } } });
    expect(finalMessage(events).content).toStrictEqual([
      { type: "toolCall", id: "call_a", name: "search", arguments: { q: "x" } },
      { type: "toolCall", id: "call_b", name: "read", arguments: { path: "a" } },
    ]);
  });

  it("more arguments for a call that had ended whole fail the message with the fragment named", () => {
    const events = run([
      delta({ index: 0, delta: { tool_calls: [{ index: 0, id: "call_a", function: { name: "search", arguments: "{}" } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 1, id: "call_b", function: { name: "read", arguments: "{}" } }] } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ',"late":1' } }] } }),
      delta({ index: 0, delta: {}, finish_reason: "tool_calls" }),
    ]);
    expect(finalMessage(events)).toMatchObject({
      stopReason: "error",
      errorMessage: 'Tool call 0 got more arguments after they formed a whole JSON object: ",\\"late\\":1"',
    });
  });

  it("two complete calls in one delta without index (keyed by id)", () => {
    const events = run([
      delta({
        index: 0,
        delta: {
          tool_calls: [
            { id: "a", function: { name: "x", arguments: "{}" } },
            { id: "b", function: { name: "y", arguments: '{"k":true}' } },
          ],
        },
        finish_reason: "tool_calls",
      }),
    ]);
    expect(finalMessage(events).content).toStrictEqual([
      { type: "toolCall", id: "a", name: "x", arguments: {} },
      { type: "toolCall", id: "b", name: "y", arguments: { k: true } },
    ]);
  });

  // The generated id was `call_<content index>`: every reply's first call was call_0, so a run's
  // second call had the first's id (two tool parts with one id in a UI message, and a provider
  // refusing the conversation).
  it("a server that sends no tool-call id gets a generated one, never the same twice", () => {
    const noId = () => run([delta({ index: 0, delta: { tool_calls: [{ index: 0, function: { name: "x", arguments: "{}" } }] }, finish_reason: "tool_calls" })]);
    const [first, second] = [finalMessage(noId()).content[0], finalMessage(noId()).content[0]];
    expect(first).toStrictEqual({ type: "toolCall", id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: "x", arguments: {} });
    expect(second).toMatchObject({ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/) });
    expect((first as { id: string }).id).not.toBe((second as { id: string }).id);
  });

  it("finish_reason stop with tool calls is toolUse; text before tools closes first", () => {
    const events = run([
      delta({ index: 0, delta: { content: "Let me check." } }),
      delta({ index: 0, delta: { tool_calls: [{ index: 0, id: "c", function: { name: "x", arguments: "{}" } }] } }),
      delta({ index: 0, delta: {}, finish_reason: "stop" }),
    ]);
    expect(events.map((event) => event.type)).toStrictEqual([
      "start",
      "text_start",
      "text_delta",
      "text_end",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_end",
      "done",
    ]);
    expect(finalMessage(events).stopReason).toBe("toolUse");
  });

  it("content_filter ends with an error message", () => {
    const events = run([delta({ index: 0, delta: { content: "Some" } }), delta({ index: 0, delta: {}, finish_reason: "content_filter" })]);
    expect(finalMessage(events)).toMatchObject({
      stopReason: "error",
      errorMessage: "The response was blocked by the provider's content filter (finish_reason: content_filter)",
      content: [{ type: "text", text: "Some" }],
    });
  });

  it("usage wherever it comes: the last one seen wins", () => {
    const events = run([
      { id: "c1", model: "m", choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } },
      { id: "c1", model: "m", choices: [{ index: 0, delta: {}, finish_reason: null }], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13, prompt_tokens_details: { cached_tokens: 4 } } },
    ]);
    expect(finalMessage(events).usage).toMatchObject({ input: 6, output: 3, cacheRead: 4, totalTokens: 13 });
  });

  // A server of its own sent counts as strings or objects: the partials' usage read NaN, and the
  // Agent's totals became strings.
  it("usage counts that are not finite numbers read as 0, in the partials as in the final message", () => {
    const events = run([
      delta({ index: 0, delta: { content: "hi" } }),
      { id: "c1", model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: "12", completion_tokens: 3, total_tokens: {}, prompt_tokens_details: { cached_tokens: Number.NaN } } as never },
    ]);
    const usages = events.flatMap((event) => ("partial" in event ? [event.partial.usage] : []));
    const amounts = [...usages, finalMessage(events).usage].flatMap(({ cost, ...counts }) => [...Object.values(counts), ...Object.values(cost)]);
    expect(amounts.filter((value) => !Number.isFinite(value))).toStrictEqual([]);
    expect(finalMessage(events).usage).toMatchObject({ input: 0, output: 3, cacheRead: 0, totalTokens: 0 });
  });

  it("an abort becomes stopReason aborted", () => {
    const events = run([delta({ index: 0, delta: { content: "Hel" } })], new RequestAbortedError());
    expect(events[events.length - 1]).toMatchObject({ type: "error", reason: "aborted", error: { stopReason: "aborted", errorMessage: "Request was aborted", content: [{ type: "text", text: "Hel" }] } });
  });

  it("earlier partials are not mutated by later chunks", () => {
    const events = run([delta({ index: 0, delta: { content: "a" } }), delta({ index: 0, delta: { content: "b" } }), delta({ index: 0, delta: {}, finish_reason: "stop" })]);
    const deltas = events.filter((event) => event.type === "text_delta");
    expect(deltas.map((event) => event.partial.content[0])).toStrictEqual([
      { type: "text", text: "a" },
      { type: "text", text: "ab" },
    ]);
  });
});
