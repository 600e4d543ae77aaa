import { describe, expect, it } from "vitest";
import { settledModelMessage } from "../../src/model/check-model-message.js";
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
});
