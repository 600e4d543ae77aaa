import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { fromPiAi } from "../../src/pi-ai/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import type { AgentEvent } from "../../src/types.js";
import { loadProviderFixture, piAiTestModel, providerFrames } from "../helpers/provider-fixtures.js";
import { startReplayServer } from "../helpers/sse-replay-server.js";

const prompt = { role: "user" as const, content: "What is 1 plus 2?", timestamp: 1 };
const addition = loadProviderFixture("anthropic", "tool-use-single-only");
const weather = loadProviderFixture("gemini", "tool-call-1");
const plusAndMinus = loadProviderFixture("anthropic", "tool-use-parallel-3");

/** Runs an agent with `output` against recorded replies; the recordings' tool is the final-answer tool. */
async function run(fixtureSteps: { frames: string[] }[], fixture: typeof addition, config: { output: Parameters<typeof agentLoop>[2]["output"]; outputTool: { name: string }; outputRetries?: number }) {
  const server = await startReplayServer(fixtureSteps.map((step) => ({ kind: "frames" as const, frames: step.frames })));
  try {
    const model = fromPiAi(piAiTestModel(fixture, server.baseURL.replace(/\/v1$/, "")), { apiKey: "test-key", maxRetries: 0 });
    const events: AgentEvent[] = await lastValueFrom(agentLoop([prompt], { messages: [] }, { model, ...config }).pipe(toArray()));
    assertEventGrammar(events);
    return { end: events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>, requests: server.requests };
  } finally {
    await server.close();
  }
}

describe("structured output over a replayed real provider stream (pi-ai)", () => {
  it("Anthropic: claude-3-haiku's recorded forced call is the final answer; one request, typed output", async () => {
    const { end, requests } = await run([{ frames: providerFrames(addition) }], addition, {
      output: Type.Object({ a: Type.Number(), b: Type.Number() }),
      outputTool: { name: "plus" },
    });
    expect([end.output, end.outputError, requests.length]).toStrictEqual([{ a: 1, b: 2 }, undefined, 1]);
    const tools = (requests[0]!.body as { tools: { name: string; input_schema: unknown }[] }).tools;
    expect(tools.map(({ name, input_schema }) => ({ name, input_schema }))).toStrictEqual([
      { name: "plus", input_schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } },
    ]);
  });

  it("Gemini: gemini-3-pro-preview's recorded call with its thought signature is the final answer", async () => {
    const { end, requests } = await run([{ frames: providerFrames(weather) }], weather, {
      output: Type.Object({ location: Type.String() }),
      outputTool: { name: "weather" },
    });
    expect([end.output, requests.length]).toStrictEqual([{ location: "San Francisco" }, 1]);
  });

  it("Anthropic: arguments that miss a required field go back as an error result; the same miss again ends the run with outputError", async () => {
    // The second reply (claude-3-opus) calls plus the same way, and minus, which this run lacks.
    const schema = Type.Object({ a: Type.Number(), b: Type.Number(), note: Type.String() });
    const { end, requests } = await run([{ frames: providerFrames(addition) }, { frames: providerFrames(plusAndMinus) }], addition, {
      output: schema,
      outputTool: { name: "plus" },
      outputRetries: 1,
    });
    const invalid = ['Invalid arguments for tool "plus":', "  - /note: Expected required property; Expected string (missing)"];
    expect(requests).toHaveLength(2);
    const sent = (requests[1]!.body as { messages: { role: string; content: unknown }[] }).messages.at(-1)!;
    const [result] = sent.content as { type: string; tool_use_id: string; is_error: boolean; content: unknown }[];
    expect([sent.role, result!.type, result!.tool_use_id, result!.is_error]).toStrictEqual(["user", "tool_result", "toolu_01241nJU2Az1M4ksrkC48L7F", true]);
    expect(end.output).toBeUndefined();
    expect(end.outputError?.split("\n").slice(0, 2)).toStrictEqual([`No valid final answer after 2 attempts; the last: ${invalid[0]}`, invalid[1]]);
  });
});
