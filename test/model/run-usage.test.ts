import { lastValueFrom, of, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { runUsage } from "../../src/model/run-usage.js";
import { withFallback } from "../../src/model/with-fallback.js";
import { withRetry } from "../../src/model/with-retry.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import type { Model } from "../../src/types/model.js";
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

  it("counts only finite numbers of a usage a tool reported, so one bad report cannot make the bill a string or NaN", () => {
    const reported = { input: "7", output: {}, cacheRead: null, cacheWrite: 1, totalTokens: Number.NaN, cost: { input: 0.5, output: "x", total: 0.5 } };
    const total = runUsage([{ role: "toolResult", toolCallId: "c", toolName: "search", content: [], isError: false, usage: reported, timestamp: 0 } as unknown as AgentMessage]);
    expect(total).toStrictEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 1, totalTokens: 0, cost: { input: 0.5, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.5 } });
  });

  it("counts what calls retried or fallen back from reported (an answer's retriedUsage, its fallbackFrom's usage)", () => {
    const { message } = modelEvents();
    const answer = { ...message([]), usage: usage(10, 5, 0.01), retriedUsage: usage(4, 0, 0.004), fallbackFrom: [{ provider: "a", model: "x", errorMessage: "503", usage: usage(2, 0, 0.002) }, { provider: "b", model: "y", errorMessage: "500" }] };
    const total = runUsage([answer]);
    expect([total.input, total.output, total.totalTokens]).toStrictEqual([16, 5, 21]);
    expect(total.cost.total).toBeCloseTo(0.016, 10);
  });

  it("agent_end, Agent.state and the run's bill count the tokens of calls that failed before content and were retried or fallen back from", async () => {
    // An Anthropic-like failure: the server reported input tokens (message_start), then overloaded.
    const { message } = modelEvents("flaky");
    const overloaded = { ...message([], "error"), usage: usage(100, 0, 0.3), errorMessage: "529 Overloaded" };
    const flaky: Model = { id: "flaky", provider: "test", api: "test", stream: () => of({ type: "start" as const, partial: message([]) }, { type: "error" as const, reason: "error" as const, error: overloaded }) };
    const { message: backupMessage } = modelEvents("backup");
    const answer = { ...backupMessage([{ type: "text", text: "Hi" }]), usage: usage(10, 5, 0.01) };
    const backup: Model = { id: "backup", provider: "test", api: "test", stream: () => of({ type: "start" as const, partial: backupMessage([]) }, { type: "done" as const, reason: "stop" as const, message: answer }) };
    // Two attempts of the primary (one retry), then the backup: 100 + 100 + 10 input tokens.
    const model = withFallback([withRetry(flaky, { retries: 1, initialDelayMs: 0 }), backup]);
    const events = await lastValueFrom(agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [] }, { model }).pipe(toArray()));
    const end = events.at(-1);
    expect(end?.type === "agent_end" ? [end.usage?.input, end.usage?.output, end.usage?.cost.total] : undefined).toStrictEqual([210, 5, 0.61]);

    const agent = new Agent({ model });
    await agent.run("hi");
    expect([agent.state.usage.input, agent.state.usage.cost.total]).toStrictEqual([210, 0.61]);
  });
});
