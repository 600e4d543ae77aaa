import { Type } from "@sinclair/typebox";
import { map, type Observable, type SchedulerLike, timer } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentTool } from "../../src/agents/agent-tool.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentLoopConfig, ToolCallCancellation } from "../../src/types.js";
import { subAgentUpdateOf } from "../../src/types/sub-agent.js";
import { marbles } from "../helpers/marbles.js";
import { userMessage } from "../testing/fixtures.js";

type End = Extract<AgentEvent, { type: "agent_end" }>;

const calls = (...ids: string[]): ScriptedTurn => ({ content: ids.map((id) => ({ type: "toolCall" as const, id, name: id.startsWith("r") ? "researcher" : "slow", arguments: id.startsWith("r") ? { task: id } : {} })) });

/** A nested tool that waits on a Promise that never settles and logs when its signal fires: what a tool on fetch or an SDK does. */
function waitingTool(scheduler: SchedulerLike, log: string[]) {
  return defineTool({
    name: "slow",
    description: "Waits",
    parameters: Type.Object({}),
    execute: (id, _args, { signal }) => {
      log.push(`nested ${id} started at ${scheduler.now()}`);
      signal.addEventListener("abort", () => log.push(`nested ${id} signal fired at ${scheduler.now()}`));
      return new Promise<never>(() => undefined);
    },
  });
}

/** A nested tool that answers after 10 frames, logging when it starts. */
function timedTool(scheduler: SchedulerLike, log: string[]) {
  return defineTool({
    name: "slow",
    description: "Takes 10 frames",
    parameters: Type.Object({}),
    execute: (id): Observable<ReturnType<typeof textResult>> => {
      log.push(`${id} starts at ${scheduler.now()}`);
      return timer(10, scheduler).pipe(map(() => textResult("done")));
    },
  });
}

describe("agentTool: stopping the call reaches the nested run's tools", () => {
  // The parent's reply streams at 1..5 and the call starts at 5; the nested reply at 6..10, and
  // its tool starts at 10. Each way of stopping the call acts at 50.
  const stoppers: { name: string; aborts?: true; cancels?: true; timeoutMs?: number }[] = [
    { name: "aborting the parent", aborts: true },
    { name: "cancelToolCall of the call", cancels: true },
    { name: "the call's timeoutMs", timeoutMs: 45 },
  ];
  for (const stopper of stoppers) {
    it(
      `${stopper.name} fires the running nested tool's signal at once`,
      marbles((m) => {
        const log: string[] = [];
        const researcher = agentTool({
          name: "researcher",
          description: "Researches",
          tools: [waitingTool(m.scheduler, log)],
          model: scriptedModel([calls("n1")], { scheduler: m.scheduler, delay: 1 }),
          scheduler: m.scheduler,
          ...(stopper.timeoutMs === undefined ? {} : { timeoutMs: stopper.timeoutMs }),
        });
        const controller = new AbortController();
        if (stopper.aborts) m.scheduler.schedule(() => controller.abort(), 50);
        const cancellations: Partial<AgentLoopConfig> = stopper.cancels ? { cancellations: m.hot<ToolCallCancellation>("50ms c", { c: { toolCallId: "r1" } }) } : {};
        const events: AgentEvent[] = [];
        agentLoop([userMessage("Go")], { messages: [], tools: [researcher] }, {
          model: scriptedModel([calls("r1"), "Done"], { scheduler: m.scheduler, delay: 1 }),
          scheduler: m.scheduler,
          signal: controller.signal,
          ...cancellations,
        }).subscribe((event) => events.push(event));
        m.flush();
        expect(log).toStrictEqual(["nested n1 started at 10", "nested n1 signal fired at 50"]);
        expect((events.at(-1) as End).reason).toBe(stopper.aborts ? "aborted" : "idle");
      }),
    );
  }
});

describe("agentTool: limits inside and around the call", () => {
  it(
    "the sub-agent's own maxConcurrency limits the calls inside it",
    marbles((m) => {
      const log: string[] = [];
      const researcher = agentTool({
        name: "researcher",
        description: "Researches",
        tools: [timedTool(m.scheduler, log)],
        maxConcurrency: 1,
        model: scriptedModel([calls("n1", "n2"), "Both done"], { scheduler: m.scheduler, delay: 1 }),
        scheduler: m.scheduler,
      });
      agentLoop([userMessage("Go")], { messages: [], tools: [researcher] }, { model: scriptedModel([calls("r1"), "Done"], { scheduler: m.scheduler, delay: 1 }), scheduler: m.scheduler }).subscribe();
      m.flush();
      // The nested reply (two calls) streams its events at 6..13; n2 waits for n1's slot.
      expect(log).toStrictEqual(["n1 starts at 13", "n2 starts at 23"]);
    }),
  );

  it(
    "the tool's concurrency counts each call in the parent's run: the second sub-agent starts when the first ends",
    marbles((m) => {
      const researcher = agentTool({ name: "researcher", description: "Researches", concurrency: 1, model: scriptedModel(["one", "two"], { scheduler: m.scheduler, delay: 1 }), scheduler: m.scheduler });
      const log: string[] = [];
      agentLoop([userMessage("Go")], { messages: [], tools: [researcher] }, { model: scriptedModel([calls("r1", "r2"), "Done"]), scheduler: m.scheduler }).subscribe((event) => {
        if (subAgentUpdateOf(event)?.event.type === "agent_start") log.push(`${m.scheduler.now()} sub-agent of ${(event as { toolCallId: string }).toolCallId} starts`);
        else if (event.type === "tool_execution_end") log.push(`${m.scheduler.now()} ${event.toolCallId} ends`);
      });
      m.flush();
      expect(log).toStrictEqual(["0 sub-agent of r1 starts", "5 r1 ends", "5 sub-agent of r2 starts", "10 r2 ends"]);
    }),
  );
});
