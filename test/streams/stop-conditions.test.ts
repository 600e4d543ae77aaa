import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { InvalidConfigError } from "../../src/errors.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { hasToolCall, stepCountIs, usageExceeds } from "../../src/streams/stop-conditions.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentLoopConfig, StopCondition, StopConditionContext } from "../../src/types.js";
import { emptyUsage, type Usage } from "../../src/types/messages.js";
import { assistantMessage, text, toolCall, userMessage } from "../testing/fixtures.js";
import { watchedRejection } from "../helpers/watched-rejection.js";

const spent = (fields: Partial<Omit<Usage, "cost">> & { cost?: number }): Usage => ({ ...emptyUsage(), ...fields, cost: { ...emptyUsage().cost, total: fields.cost ?? 0 } });

function contextOf(fields: Partial<StopConditionContext>): StopConditionContext {
  return { turns: 1, message: assistantMessage([text("Hi")]), toolResults: [], newMessages: [], usage: emptyUsage(), ...fields };
}

const calling = (...names: string[]) => assistantMessage(names.map((name, index) => toolCall(`c${index}`, name)));

describe("the shipped stop conditions", () => {
  const cases: { condition: StopCondition; context: Partial<StopConditionContext>; holds: boolean }[] = [
    { condition: stepCountIs(3), context: { turns: 2 }, holds: false },
    { condition: stepCountIs(3), context: { turns: 3 }, holds: true },
    { condition: stepCountIs(3), context: { turns: 4 }, holds: true },
    { condition: hasToolCall("answer"), context: { message: calling("search") }, holds: false },
    { condition: hasToolCall("answer"), context: { message: calling("search", "answer") }, holds: true },
    { condition: hasToolCall("answer", "give_up"), context: { message: calling("give_up") }, holds: true },
    { condition: hasToolCall("answer"), context: { message: assistantMessage([text("answer")]) }, holds: false },
    { condition: usageExceeds({ inputTokens: 100 }), context: { usage: spent({ input: 60, cacheRead: 40 }) }, holds: false },
    { condition: usageExceeds({ inputTokens: 100 }), context: { usage: spent({ input: 60, cacheRead: 40, cacheWrite: 1 }) }, holds: true },
    { condition: usageExceeds({ outputTokens: 10 }), context: { usage: spent({ input: 500, output: 10 }) }, holds: false },
    { condition: usageExceeds({ outputTokens: 10 }), context: { usage: spent({ output: 11 }) }, holds: true },
    { condition: usageExceeds({ cost: 0.5 }), context: { usage: spent({ cost: 0.5 }) }, holds: false },
    { condition: usageExceeds({ inputTokens: 1000, cost: 0.5 }), context: { usage: spent({ cost: 0.51 }) }, holds: true },
  ];
  for (const { condition, context, holds } of cases) {
    it(`${condition.description} ${holds ? "holds" : "does not hold"} for ${JSON.stringify({ ...context, message: context.message?.content })}`, () => {
      expect(condition(contextOf(context))).toBe(holds);
    });
  }

  it("name themselves as written", () => {
    expect([stepCountIs(5), hasToolCall("answer", "give_up"), usageExceeds({ inputTokens: 200_000, cost: 0.5 })].map((condition) => condition.description)).toStrictEqual([
      "stepCountIs(5)",
      "hasToolCall(answer, give_up)",
      "usageExceeds({ inputTokens: 200000, cost: 0.5 })",
    ]);
  });

  it("refuse arguments that could never stop, with an InvalidConfigError", () => {
    expect(() => stepCountIs(0)).toThrow(new InvalidConfigError("stepCountIs", "takes a positive integer, got 0."));
    expect(() => stepCountIs(Number.NaN)).toThrow(InvalidConfigError);
    expect(() => hasToolCall()).toThrow(new InvalidConfigError("hasToolCall", "takes one or more tool names (strings)."));
    expect(() => usageExceeds({})).toThrow(new InvalidConfigError("usageExceeds", "takes { inputTokens?, outputTokens?, cost? } with at least one number of 0 or more."));
    expect(() => usageExceeds({ cost: Number.NaN })).toThrow(
      new InvalidConfigError("usageExceeds", "takes { inputTokens?, outputTokens?, cost? } with at least one number of 0 or more; cost is NaN."),
    );
  });
});

const search = defineTool({ name: "search", description: "Searches", parameters: Type.Object({}), execute: () => textResult("found") });
const answer = defineTool({ name: "answer", description: "Gives the answer", parameters: Type.Object({}), execute: () => textResult("noted") });
const callSearch: ScriptedTurn = { content: [{ type: "toolCall", name: "search", arguments: {} }], usage: { input: 100, output: 10 } };
const callAnswer: ScriptedTurn = { content: [{ type: "toolCall", name: "answer", arguments: {} }], usage: { input: 100, output: 10 } };

async function endOf(turns: ScriptedTurn[], config: Omit<AgentLoopConfig, "model">): Promise<Extract<AgentEvent, { type: "agent_end" }>> {
  const events = await lastValueFrom(agentLoop([userMessage("Go")], { messages: [], tools: [search, answer] }, { model: scriptedModel(turns), ...config }).pipe(toArray()));
  return events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
}

describe("stopWhen in a run", () => {
  it("stops at the first condition that holds and names it in agent_end", async () => {
    const end = await endOf([callSearch, callAnswer, callSearch, "unreached"], { stopWhen: [stepCountIs(5), hasToolCall("answer")] });
    expect([end.reason, end.stopCondition, end.messages.length]).toStrictEqual(["stop_condition", "hasToolCall(answer)", 5]);
  });

  it("takes one condition as well as an array, and a plain function by its name", async () => {
    const tooLong = ({ newMessages }: StopConditionContext) => newMessages.length > 2;
    expect(await endOf([callSearch, callSearch, "unreached"], { stopWhen: tooLong })).toMatchObject({ reason: "stop_condition", stopCondition: "tooLong" });
    expect(await endOf([callSearch, callSearch, "unreached"], { stopWhen: [(context) => context.turns === 2] })).toMatchObject({ reason: "stop_condition", stopCondition: "stopWhen[0]" });
  });

  it("stops on the run's usage", async () => {
    const end = await endOf([callSearch, callSearch, callSearch, "unreached"], { stopWhen: usageExceeds({ inputTokens: 250 }) });
    expect([end.reason, end.stopCondition, end.usage?.input]).toStrictEqual(["stop_condition", "usageExceeds({ inputTokens: 250 })", 300]);
  });

  it("counts a tool's reported usage (a sub-agent's tokens) in the run's", async () => {
    // The model's own calls read 100 each: alone they pass 250 only after the third turn.
    const costly = defineTool({ name: "search", description: "Searches with a model of its own", parameters: Type.Object({}), execute: () => ({ ...textResult("found"), usage: { ...emptyUsage(), input: 200 } }) });
    const events = await lastValueFrom(
      agentLoop([userMessage("Go")], { messages: [], tools: [costly] }, { model: scriptedModel([callSearch, callSearch, callSearch, "unreached"]), stopWhen: usageExceeds({ inputTokens: 250 }) }).pipe(toArray()),
    );
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect([end.reason, end.messages.length, end.usage?.input]).toStrictEqual(["stop_condition", 3, 300]);
  });

  it("leaves maxTurns first, and shouldStopAfterTurn unasked once a condition stopped the run", async () => {
    const asked: number[] = [];
    const shouldStopAfterTurn = () => {
      asked.push(asked.length + 1);
      return false;
    };
    expect(await endOf([callSearch, callSearch, "unreached"], { maxTurns: 2, stopWhen: stepCountIs(2), shouldStopAfterTurn })).toMatchObject({ reason: "max_turns" });
    expect(await endOf([callSearch, callSearch, "unreached"], { stopWhen: stepCountIs(2), shouldStopAfterTurn })).toMatchObject({ reason: "stop_condition", stopCondition: "stepCountIs(2)" });
    expect(asked).toStrictEqual([1, 2]);
  });

  it("ends as failed, naming the condition, when a condition throws", async () => {
    const broken = Object.assign(() => {
      throw new Error("budget store down");
    }, { description: "budget" });
    const end = await endOf([callSearch, "unreached"], { stopWhen: [stepCountIs(9), broken] });
    expect([end.reason, end.errorMessage]).toStrictEqual(["failed", "The stop condition budget failed: budget store down"]);
  });

  // An async condition's Promise was read as "does not hold", and its rejection ended the process.
  it("ends as failed, naming the condition, when a condition answers with a Promise, and handles its rejection", async () => {
    const { thenable, handled } = watchedRejection();
    const later = Object.assign(() => thenable as never, { description: "later" });
    const end = await endOf([callSearch, "unreached"], { stopWhen: later });
    expect([end.reason, end.errorMessage]).toStrictEqual(["failed", "The stop condition later failed: it returned a Promise, and it must answer synchronously"]);
    expect(handled()).toBe(true);
  });

  it("refuses a stopWhen that is not conditions before the run starts", () => {
    const model = scriptedModel(["Hi"]);
    expect(() => agentLoop([userMessage("Go")], { messages: [] }, { model, stopWhen: 5 as never })).toThrow(
      new InvalidConfigError("stopWhen", "must be a condition (a function) or an array of them, got 5."),
    );
    expect(() => new Agent({ model, stopWhen: [stepCountIs(2), "answer" as never] })).toThrow(
      new InvalidConfigError("stopWhen[1]", 'must be a condition (a function, e.g. stepCountIs(5)), got "answer".'),
    );
  });

  it("works from an Agent's options, for each of its runs", async () => {
    const agent = new Agent({ model: scriptedModel([callSearch, callAnswer, callAnswer]), tools: [search, answer], stopWhen: hasToolCall("answer") });
    const ends: AgentEvent[] = [];
    agent.events$.subscribe((event) => {
      if (event.type === "agent_end") ends.push(event);
    });
    await agent.run("Go");
    await agent.run("Again");
    expect(ends.map((event) => event.type === "agent_end" && [event.reason, event.stopCondition, event.messages.length])).toStrictEqual([
      ["stop_condition", "hasToolCall(answer)", 5],
      ["stop_condition", "hasToolCall(answer)", 3],
    ]);
  });
});
