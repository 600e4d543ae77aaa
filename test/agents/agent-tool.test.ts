import { Type } from "@sinclair/typebox";
import { lastValueFrom, NEVER, Observable, toArray, VirtualTimeScheduler, type SchedulerLike } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentTool } from "../../src/agents/agent-tool.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { AgentEvent, AgentTool, Model, ToolResultMessage } from "../../src/types.js";
import { emptyUsage } from "../../src/types/messages.js";
import { subAgentUpdateOf } from "../../src/types/sub-agent.js";
import { marbles } from "../helpers/marbles.js";
import { userMessage } from "../testing/fixtures.js";

type End = Extract<AgentEvent, { type: "agent_end" }>;
type ExecutionEnd = Extract<AgentEvent, { type: "tool_execution_end" }>;

const callResearcher = (id: string, task = "Find the answer"): ScriptedTurn => ({
  content: [{ type: "toolCall", id, name: "researcher", arguments: { task } }],
  usage: { input: 10, output: 5, totalTokens: 15 },
});

function run(model: Model, tools: Parameters<typeof agentLoop>[1]["tools"], signal?: AbortSignal, scheduler?: SchedulerLike) {
  return agentLoop([userMessage("Go")], { messages: [], tools }, { model, ...(signal ? { signal } : {}), ...(scheduler ? { scheduler } : {}) });
}

/** A model whose request never answers, logging when it starts and when it is torn down. */
function hangingModel(scheduler: SchedulerLike, log: string[]): Model {
  return {
    id: "hanging",
    provider: "test",
    api: "test",
    stream: () =>
      new Observable(() => {
        log.push(`nested model request at ${scheduler.now()}`);
        return () => log.push(`nested model request torn down at ${scheduler.now()}`);
      }),
  };
}

describe("agentTool", () => {
  it("passes every event of the nested run on as the call's updates, and answers with its final text and usage", async () => {
    const nestedReplies: ScriptedTurn[] = [{ content: [{ type: "text", text: "The answer is 42" }], usage: { input: 100, output: 20, totalTokens: 120 } }];
    const researcher = agentTool({
      name: "researcher",
      description: "Researches",
      systemPrompt: "Be brief.",
      prompt: ({ task }) => [userMessage(task)],
      model: scriptedModel(nestedReplies),
    });
    const events = await lastValueFrom(run(scriptedModel([callResearcher("r1"), { content: [{ type: "text", text: "Done" }], usage: { input: 30, output: 7, totalTokens: 37 } }]), [researcher]).pipe(toArray()));
    assertEventGrammar(events);

    // The same nested run on its own, as a second opinion on what the parent should hear.
    const alone = await lastValueFrom(agentLoop([userMessage("Find the answer")], { systemPrompt: "Be brief.", messages: [], tools: [] }, { model: scriptedModel(nestedReplies) }).pipe(toArray()));
    const forwarded = events.flatMap((event) => {
      const update = subAgentUpdateOf(event);
      return update ? [update] : [];
    });
    expect(forwarded).toStrictEqual(alone.slice(0, -1).map((event) => ({ type: "sub_agent_event", agent: "researcher", depth: 1, event })));
    expect(events.filter((event) => event.type === "tool_execution_update").every((event) => event.toolCallId === "r1")).toBe(true);

    const nestedUsage = { ...emptyUsage(), input: 100, output: 20, totalTokens: 120 };
    const end = events.find((event): event is ExecutionEnd => event.type === "tool_execution_end")!;
    expect(end).toStrictEqual({
      type: "tool_execution_end",
      toolCallId: "r1",
      toolName: "researcher",
      isError: false,
      result: { content: [{ type: "text", text: "The answer is 42" }], details: { type: "sub_agent_result", agent: "researcher", reason: "idle" }, usage: nestedUsage },
    });
    const agentEnd = events.at(-1) as End;
    expect(agentEnd.usage).toStrictEqual({ ...emptyUsage(), input: 140, output: 32, totalTokens: 172 });
  });

  it("answers with the nested run's typed output when it has an output schema", async () => {
    const researcher = agentTool({
      name: "researcher",
      description: "Researches",
      output: Type.Object({ answer: Type.Number() }),
      model: scriptedModel([{ content: [{ type: "toolCall", id: "f1", name: "final_answer", arguments: { answer: 42 } }] }]),
    });
    const events = await lastValueFrom(run(scriptedModel([callResearcher("r1"), "Done"]), [researcher]).pipe(toArray()));
    const end = events.find((event): event is ExecutionEnd => event.type === "tool_execution_end")!;
    expect([end.isError, end.result.content, end.result.details]).toStrictEqual([
      false,
      [{ type: "text", text: '{"answer":42}' }],
      { type: "sub_agent_result", agent: "researcher", reason: "terminated", output: { answer: 42 } },
    ]);
  });

  it("gives an error result when the nested run fails", async () => {
    const researcher = agentTool({ name: "researcher", description: "Researches", model: scriptedModel([{ stopReason: "error", errorMessage: "overloaded" }]) });
    const events = await lastValueFrom(run(scriptedModel([callResearcher("r1"), "Done"]), [researcher]).pipe(toArray()));
    const end = events.find((event): event is ExecutionEnd => event.type === "tool_execution_end")!;
    expect([end.isError, end.result.content]).toStrictEqual([true, [{ type: "text", text: 'Sub-agent "researcher" failed: overloaded' }]]);
    expect((events.at(-1) as End).reason).toBe("idle");
  });

  it("stops an agent that keeps calling itself at maxDepth, with an error result the deepest agent reads", async () => {
    // Every agent calls the looper until it reads a tool result, then answers.
    const turn: ScriptedTurn = (context) =>
      (context.messages.at(-1) as { role: string }).role === "toolResult" ? "gave up" : { content: [{ type: "toolCall", name: "looper", arguments: { task: "again" } }] };
    const model = scriptedModel(Array.from({ length: 20 }, () => turn));
    const looper = agentTool({ name: "looper", description: "Calls itself", tools: (): AgentTool[] => [looper], maxDepth: 3, model });
    const events = await lastValueFrom(run(model, [looper]).pipe(toArray()));
    // The parent, then depths 1, 2 and 3 call the looper; depth 4 is refused; each answers in turn.
    expect(model.calls).toHaveLength(8);
    const refused = model.calls[4]!.messages.at(-1) as ToolResultMessage;
    expect([refused.isError, refused.content]).toStrictEqual([
      true,
      [{ type: "text", text: 'Sub-agent "looper" was not started: it would run 4 agents deep, past maxDepth 3 (an agent that keeps calling itself, or too long a chain of agents).' }],
    ]);
    expect((events.at(-1) as End).reason).toBe("idle");
  });

  it(
    "aborting the parent tears the nested model request down at once",
    marbles((m) => {
      const log: string[] = [];
      const researcher = agentTool({ name: "researcher", description: "Researches", model: hangingModel(m.scheduler, log), scheduler: m.scheduler });
      const controller = new AbortController();
      const events: AgentEvent[] = [];
      run(scriptedModel([callResearcher("r1")], { scheduler: m.scheduler, delay: 1 }), [researcher], controller.signal, m.scheduler).subscribe((event) => events.push(event));
      m.scheduler.schedule(() => controller.abort(), 50);
      m.flush();
      expect(log).toStrictEqual(["nested model request at 5", "nested model request torn down at 50"]);
      expect((events.at(-1) as End).reason).toBe("aborted");
    }),
  );

  it(
    "cancelling the call tears the nested run down at once and the parent goes on",
    marbles((m) => {
      const log: string[] = [];
      const researcher = agentTool({ name: "researcher", description: "Researches", model: hangingModel(m.scheduler, log), scheduler: m.scheduler });
      const cancellations = m.hot<{ toolCallId: string }>("-- 40ms c", { c: { toolCallId: "r1" } });
      const events: AgentEvent[] = [];
      agentLoop([userMessage("Go")], { messages: [], tools: [researcher] }, { model: scriptedModel([callResearcher("r1"), "Done"], { scheduler: m.scheduler, delay: 1 }), scheduler: m.scheduler, cancellations }).subscribe((event) => events.push(event));
      m.flush();
      expect(log).toStrictEqual(["nested model request at 5", "nested model request torn down at 42"]);
      const end = events.find((event): event is ExecutionEnd => event.type === "tool_execution_end")!;
      expect([end.isError, end.result.content]).toStrictEqual([true, [{ type: "text", text: "Tool call was cancelled." }]]);
      expect((events.at(-1) as End).reason).toBe("idle");
    }),
  );

  it(
    "its timeoutMs tears the nested run down when it passes, nested tools included",
    marbles((m) => {
      const log: string[] = [];
      const wait = defineTool({
        name: "wait",
        description: "Waits forever",
        parameters: Type.Object({}),
        execute: () =>
          new Observable<never>(() => {
            log.push(`nested tool started at ${m.scheduler.now()}`);
            return () => log.push(`nested tool torn down at ${m.scheduler.now()}`);
          }),
      });
      const researcher = agentTool({
        name: "researcher",
        description: "Researches",
        tools: [wait],
        timeoutMs: 100,
        model: scriptedModel([{ content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }] }], { scheduler: m.scheduler, delay: 1 }),
        scheduler: m.scheduler,
      });
      const events: AgentEvent[] = [];
      run(scriptedModel([callResearcher("r1"), "Done"], { scheduler: m.scheduler, delay: 1 }), [researcher], undefined, m.scheduler).subscribe((event) => events.push(event));
      m.flush();
      // The call starts at 5 (the parent's reply streams its five events at 1..5), its nested tool
      // at 10 (the nested reply's five events at 6..10); the call's 100 ms run out at 105.
      expect(log).toStrictEqual(["nested tool started at 10", "nested tool torn down at 105"]);
      const end = events.find((event): event is ExecutionEnd => event.type === "tool_execution_end")!;
      expect(end.isError).toBe(true);
      expect((events.at(-1) as End).reason).toBe("idle");
    }),
  );

  it("runs on the parent run's scheduler when its options name none: the nested tool's timeout passes in the parent's virtual time", () => {
    const scheduler = new VirtualTimeScheduler();
    const log: string[] = [];
    const wait = defineTool({
      name: "wait",
      description: "Waits forever",
      parameters: Type.Object({}),
      timeoutMs: 50,
      execute: () => new Observable<never>(() => () => log.push(`nested tool stopped at ${scheduler.now()}`)),
    });
    const researcher = agentTool({ name: "researcher", description: "Researches", tools: [wait], model: scriptedModel([{ content: [{ type: "toolCall", id: "w1", name: "wait", arguments: {} }] }, "Gave up"]) });
    const events: AgentEvent[] = [];
    agentLoop([userMessage("Go")], { messages: [], tools: [researcher] }, { model: scriptedModel([callResearcher("r1"), "Done"]), scheduler }).subscribe((event) => events.push(event));
    scheduler.flush();
    expect(log).toStrictEqual(["nested tool stopped at 50"]);
    const nestedPrompt = events.map((event) => subAgentUpdateOf(event)?.event).find((event) => event?.type === "message_start");
    expect((nestedPrompt as { message: { timestamp: number } } | undefined)?.message.timestamp).toBe(0);
    expect((events.at(-1) as End).reason).toBe("idle");
  });

  it(
    "counts each call against the parent's maxConcurrency: the second sub-agent starts when the first ends",
    marbles((m) => {
      const researcher = agentTool({ name: "researcher", description: "Researches", model: scriptedModel(["one", "two"], { scheduler: m.scheduler, delay: 1 }), scheduler: m.scheduler });
      const twoCalls: ScriptedTurn = { content: [{ type: "toolCall", id: "r1", name: "researcher", arguments: { task: "1" } }, { type: "toolCall", id: "r2", name: "researcher", arguments: { task: "2" } }] };
      const log: string[] = [];
      agentLoop([userMessage("Go")], { messages: [], tools: [researcher] }, { model: scriptedModel([twoCalls, "Done"]), maxConcurrency: 1, scheduler: m.scheduler }).subscribe((event) => {
        const nested = subAgentUpdateOf(event)?.event;
        if (event.type.startsWith("tool_slot_wait") || event.type === "tool_execution_end") log.push(`${m.scheduler.now()} ${event.type} ${(event as { toolCallId: string }).toolCallId}`);
        else if (nested?.type === "agent_start") log.push(`${m.scheduler.now()} sub-agent of ${(event as { toolCallId: string }).toolCallId} starts`);
      });
      m.flush();
      // Each nested reply streams five events, a frame apart.
      expect(log).toStrictEqual([
        "0 sub-agent of r1 starts",
        "0 tool_slot_wait_start r2",
        "5 tool_execution_end r1",
        "5 tool_slot_wait_end r2",
        "5 sub-agent of r2 starts",
        "10 tool_execution_end r2",
      ]);
    }),
  );

  it("leaves out the nested events forwardEvent refuses", async () => {
    const researcher = agentTool({ name: "researcher", description: "Researches", forwardEvent: (event) => event.type !== "message_update", model: scriptedModel(["a few words here"]) });
    const events = await lastValueFrom(run(scriptedModel([callResearcher("r1"), "Done"]), [researcher]).pipe(toArray()));
    expect(events.flatMap((event) => subAgentUpdateOf(event)?.event.type ?? [])).toStrictEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "turn_end",
    ]);
  });

  it("declares a task argument when it is given no parameters", () => {
    const researcher = agentTool({ name: "researcher", description: "Researches", model: { id: "x", provider: "x", api: "x", stream: () => NEVER } });
    expect(researcher.name).toBe("researcher");
    expect(researcher.parameters).toMatchObject({ type: "object", required: ["task"] });
  });
});
