import { describe, expect, it } from "vitest";
import { runUsage } from "../../src/model/run-usage.js";
import type { AgentMessage, Usage } from "../../src/types/messages.js";
import { emptyUsage } from "../../src/types/messages.js";
import { modelEvents } from "../helpers/model-events.js";

const usage = (input: number, output: number, cost: number): Usage => ({ ...emptyUsage(), input, output, totalTokens: input + output, cost: { ...emptyUsage().cost, total: cost } });

describe("runUsage", () => {
  it("sums every assistant message (failed ones too) and every tool result that reported usage", () => {
    const { message } = modelEvents();
    const messages: AgentMessage[] = [
      { role: "user", content: "hi", timestamp: 0 },
      { ...message([], "error"), usage: usage(3, 0, 0.001), errorMessage: "503" },
      { ...message([]), usage: usage(10, 5, 0.01) },
      { role: "toolResult", toolCallId: "c", toolName: "search", content: [], isError: false, usage: usage(100, 20, 0.1), timestamp: 0 },
      { role: "toolResult", toolCallId: "d", toolName: "clock", content: [], isError: false, timestamp: 0 },
    ];
    const total = runUsage(messages);
    expect([total.input, total.output, total.totalTokens]).toStrictEqual([113, 25, 138]);
    expect(total.cost.total).toBeCloseTo(0.111, 10);
    expect(runUsage([])).toStrictEqual(emptyUsage());
  });
});
