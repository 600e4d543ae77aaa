import { describe, expect, it } from "vitest";
import { toolResultMessage } from "../../../src/operators/tool-calls/tool-result-message.js";
import { FinalizedToolCall } from "../../../src/operators/tool-calls/tool-batch.js";
import type { ToolCall, Usage } from "../../../src/types.js";

const toolCall: ToolCall = { type: "toolCall", id: "call-1", name: "search", arguments: { query: "x" } };

describe("toolResultMessage", () => {
  it("is a plain object with the fields in a literal's order", () => {
    const message = toolResultMessage(new FinalizedToolCall(0, toolCall, { content: [{ type: "text", text: "ok" }], details: { hits: 1 } }, false), 42);
    expect(Object.getPrototypeOf(message)).toBe(Object.prototype);
    expect(message.constructor).toBe(Object);
    expect(Object.keys(message)).toStrictEqual(["role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"]);
    expect(message).toStrictEqual({
      role: "toolResult",
      toolCallId: "call-1",
      toolName: "search",
      content: [{ type: "text", text: "ok" }],
      details: { hits: 1 },
      isError: false,
      timestamp: 42,
    });
    expect(JSON.parse(JSON.stringify(message))).toStrictEqual(message);
    expect(structuredClone(message)).toStrictEqual(message);
  });

  it("carries the result's usage, last, only when there is one", () => {
    const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } as Usage;
    const message = toolResultMessage(new FinalizedToolCall(3, toolCall, { content: [], details: undefined, usage }, true), 7);
    expect(Object.keys(message)).toStrictEqual(["role", "toolCallId", "toolName", "content", "details", "isError", "timestamp", "usage"]);
    expect(message).toStrictEqual({ role: "toolResult", toolCallId: "call-1", toolName: "search", content: [], details: undefined, isError: true, timestamp: 7, usage });
  });
});
