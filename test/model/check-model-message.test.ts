import { describe, expect, it } from "vitest";
import { endingFromPartial, problemOfModelMessage, settledModelMessage, type TakenCallIds } from "../../src/model/check-model-message.js";
import type { AssistantMessage, ToolCall } from "../../src/types.js";

const call = (id: string): ToolCall => ({ type: "toolCall", id, name: "echo", arguments: {} });
const message = (ids: string[]): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "calling" }, ...ids.map(call)],
  api: "test",
  provider: "test",
  model: "test",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "toolUse",
  timestamp: 0,
});
const idsOf = (settled: AssistantMessage) => settled.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : []));

describe("settledModelMessage", () => {
  it("keeps a message whose calls have ids of their own as it is, with few calls and with many", () => {
    for (const count of [8, 40]) {
      const original = message(Array.from({ length: count }, (_, index) => `call_${index}`));
      expect(settledModelMessage(original)).toBe(original);
    }
  });

  it("gives a repeated id a fresh one, whether the message has few calls or many", () => {
    const few = ["a", "b", "c", "b", "a_2", "a"];
    expect(idsOf(settledModelMessage(message(few)))).toStrictEqual(["a", "b", "c", "b_2", "a_2", "a_3"]);
    const many = [...Array.from({ length: 30 }, (_, index) => `call_${index}`), "call_3", "call_3"];
    expect(idsOf(settledModelMessage(message(many))).slice(-2)).toStrictEqual(["call_3_2", "call_3_3"]);
  });

  // A server that numbers its calls per reply (call_0 in every reply) gave a run two calls with
  // one id: two tool parts with that id in a UI message, and a provider refusing the conversation.
  it("renames an id an earlier message of the run took, and remembers the ids of each message", () => {
    // As a run does: each settled message joins the transcript the table confirms its hashes in.
    const transcript: AssistantMessage[] = [];
    const taken: TakenCallIds = { toolCallIds: undefined, context: { messages: transcript } };
    const settle = (sent: AssistantMessage) => {
      const settled = settledModelMessage(sent, taken);
      transcript.push(settled);
      return settled;
    };
    const first = message(["call_0", "call_1"]);
    expect(settle(first)).toBe(first);
    expect(idsOf(settle(message(["call_0"])))).toStrictEqual(["call_0_2"]);
    expect(idsOf(settle(message(["call_1", "call_0", "call_9"])))).toStrictEqual(["call_1_2", "call_0_3", "call_9"]);
    for (const id of ["call_0", "call_1", "call_0_2", "call_1_2", "call_0_3", "call_9"]) expect(taken.toolCallIds!.has(id)).toBe(true);
    expect(taken.toolCallIds!.has("call_2")).toBe(false);
    // The k-th repeat of one id is named at once: call_0_4 is not looked for as call_0_2 and call_0_3 again.
    expect(idsOf(settle(message(["call_0"])))).toStrictEqual(["call_0_4"]);
    const textOnly: TakenCallIds = { toolCallIds: undefined, context: { messages: [] } };
    settledModelMessage(message([]), textOnly);
    expect(textOnly.toolCallIds).toBeUndefined();
  });

  // Its result had no id either, and every later request of the conversation was refused.
  it("gives a call with no id, an empty one or one that is not a string a fresh id, and a name that is not a string \"\"", () => {
    const unnamed = { ...call("x"), name: 7 } as unknown as ToolCall;
    const sent = message(["call_2"]);
    sent.content.push({ ...call("y"), id: undefined } as unknown as ToolCall, { ...call("z"), id: "" }, { ...call("w"), id: 12 } as unknown as ToolCall, unnamed);
    const settled = settledModelMessage(sent);
    expect(idsOf(settled)).toStrictEqual(["call_2", "call_3", "call_4", "call_5", "x"]);
    expect(settled.content.flatMap((block) => (block.type === "toolCall" ? [block.name] : []))).toStrictEqual(["echo", "echo", "echo", "echo", ""]);
  });

  // A provider's usage of strings, null or objects made the Agent's totals a string
  // ("0[object Object]") or NaN, for good: every later message was added to it.
  it("makes every count and cost of usage a finite number, 0 where it was not one", () => {
    const wellFormed = message([]);
    expect(settledModelMessage(wellFormed)).toBe(wellFormed);
    const sent = { ...message([]), usage: { input: "12", output: 5, cacheRead: null, totalTokens: {}, cost: { input: Number.NaN, output: -1, total: Infinity } } } as unknown as AssistantMessage;
    expect(settledModelMessage(sent).usage).toStrictEqual({ input: 0, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
    expect(settledModelMessage({ ...message([]), usage: { ...message([]).usage, cost: "free" } } as unknown as AssistantMessage).usage.cost).toStrictEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 });
  });

  it("makes an errorMessage that is not text into text", () => {
    expect(settledModelMessage({ ...message([]), stopReason: "error", errorMessage: { code: 500 } as unknown as string }).errorMessage).toBe('{"code":500}');
  });
});

describe("problemOfModelMessage", () => {
  it("names a role that is not the assistant's, cutting a long one", () => {
    expect(problemOfModelMessage(message([]))).toBeUndefined();
    expect(problemOfModelMessage({ ...message([]), role: "user" })).toBe('has role "user", not "assistant"');
    expect(problemOfModelMessage({ ...message([]), role: 7 })).toBe('has a role that is a number, not "assistant"');
    expect(problemOfModelMessage({ ...message([]), role: "x".repeat(10_000) })).toBe(`has role "${"x".repeat(40)}…", not "assistant"`);
  });
});

describe("endingFromPartial", () => {
  it("keeps a well-formed partial's blocks as they are, and settles its tool-call ids like a final message's", () => {
    const partial = message(["a", "a"]);
    const ending = endingFromPartial(partial, { stopReason: "error", errorMessage: "cut off" });
    expect(ending).toStrictEqual({ ...partial, content: [partial.content[0], call("a"), call("a_2")], stopReason: "error", errorMessage: "cut off" });
    expect(partial.stopReason).toBe("toolUse");
  });
});
