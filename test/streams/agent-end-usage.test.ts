import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent } from "../../src/types.js";
import { emptyUsage, type Usage } from "../../src/types/messages.js";
import { userMessage } from "../testing/fixtures.js";

const tokens = (input: number, output: number): Usage => ({ ...emptyUsage(), input, output, totalTokens: input + output, cost: { ...emptyUsage().cost, total: input / 1000 } });

describe("agent_end.usage", () => {
  it("sums every model call of the run and the usage a tool reported, in the event users log", async () => {
    const search = defineTool({
      name: "search",
      description: "Searches with a model of its own",
      parameters: Type.Object({}),
      execute: () => ({ ...textResult("found"), usage: tokens(100, 20) }),
    });
    const model = scriptedModel([
      { content: [{ type: "toolCall", id: "s1", name: "search", arguments: {} }], usage: { input: 10, output: 5, totalTokens: 15 } },
      { content: [{ type: "text", text: "Done" }], usage: { input: 30, output: 7, totalTokens: 37 } },
    ]);
    const events = await lastValueFrom(agentLoop([userMessage("Find it", 0)], { systemPrompt: "", messages: [], tools: [search] }, { model }).pipe(toArray()));
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end.usage).toStrictEqual({
      input: 140,
      output: 32,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 172,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.1 },
    });
  });
});
