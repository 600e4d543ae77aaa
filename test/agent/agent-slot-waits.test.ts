import { Type } from "@sinclair/typebox";
import { distinctUntilChanged, map, timer, type SchedulerLike } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent, defineTool, textResult } from "../../src/index.js";
import type { AgentEvent } from "../../src/index.js";
import { assertEventGrammar, scriptedModel, type ScriptedTurn } from "../../src/testing/index.js";
import { marbles } from "../helpers/marbles.js";
import { timeline } from "../helpers/timeline.js";

function work(scheduler: SchedulerLike) {
  return defineTool({
    name: "work",
    description: "Works for as long as it is told",
    parameters: Type.Object({ ms: Type.Number() }),
    execute: (_id, { ms }) => timer(ms, scheduler).pipe(map(() => textResult(`worked ${ms} ms`))),
  });
}

const batch: ScriptedTurn = {
  content: [
    { type: "toolCall", id: "a", name: "work", arguments: { ms: 30 } },
    { type: "toolCall", id: "b", name: "work", arguments: { ms: 10 } },
  ],
};

describe("Agent state while a call waits for a concurrency slot", () => {
  it(
    "shows the call in waitingToolCalls, not in pendingToolCalls, until it gets its slot",
    marbles((m) => {
      const agent = new Agent({ model: scriptedModel([batch, "done"]), tools: [work(m.scheduler)], maxConcurrency: 1, scheduler: m.scheduler });
      // running | waiting
      const view$ = agent.state$.pipe(
        map((state) => `${state.pendingToolCalls.join(",")} | ${state.waitingToolCalls.join(",")}`),
        distinctUntilChanged(),
      );
      const events: AgentEvent[] = [];
      m.scheduler.schedule(() => agent.prompt("go").subscribe((event) => events.push(event)), 5);
      m.expect(view$).toBeObservable(
        ...timeline(
          {
            0: [" | "],
            // a starts and runs; b is announced (tool_execution_start), then waits for the one slot.
            5: ["a | ", "a,b | ", "a | b"],
            // a ends at 35; b gets the slot and runs until 45.
            35: [" | b", "b | "],
            45: [" | "],
          },
          "open",
        ),
      );
      m.flush();
      expect(events.filter((event) => event.type.startsWith("tool_")).map((event) => `${event.type} ${(event as { toolCallId: string }).toolCallId}`)).toStrictEqual([
        "tool_execution_start a",
        "tool_execution_start b",
        "tool_slot_wait_start b",
        "tool_execution_end a",
        "tool_slot_wait_end b",
        "tool_execution_end b",
      ]);
      expect(events.find((event) => event.type === "tool_slot_wait_start")).toStrictEqual({ type: "tool_slot_wait_start", toolCallId: "b", toolName: "work", since: 5 });
      assertEventGrammar(events);
    }),
  );
});
