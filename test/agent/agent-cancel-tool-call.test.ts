import { Type } from "@sinclair/typebox";
import { map, timer, type SchedulerLike } from "rxjs";
import type { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import { Agent, defineTool, InvalidStateError, textResult } from "../../src/index.js";
import type { AgentEvent, ToolResultMessage } from "../../src/index.js";
import { assertEventGrammar, scriptedModel, type ScriptedTurn } from "../../src/testing/index.js";
import { marbles } from "../helpers/marbles.js";

function slowTool(scheduler: SchedulerLike) {
  return defineTool({
    name: "slow",
    description: "Takes `ms` milliseconds",
    parameters: Type.Object({ ms: Type.Number() }),
    execute: (_id, { ms }) => timer(ms, scheduler).pipe(map(() => textResult(`slept ${ms}`))),
  });
}

const twoCalls: ScriptedTurn = {
  content: [
    { type: "toolCall", id: "long", name: "slow", arguments: { ms: 100 } },
    { type: "toolCall", id: "short", name: "slow", arguments: { ms: 10 } },
  ],
};

function record(agent: Agent, scheduler: TestScheduler): string[] {
  const entries: string[] = [];
  agent.events$.subscribe((event) => {
    if (event.type === "message_update") return;
    entries.push(`${scheduler.now()} ${describe_(event)}`);
  });
  return entries;
}

function describe_(event: AgentEvent): string {
  if (event.type === "tool_execution_start") return `${event.type} ${event.toolCallId}`;
  if (event.type === "tool_execution_end") return `${event.type} ${event.toolCallId} ${event.isError ? "error" : "ok"}`;
  if (event.type === "message_start" || event.type === "message_end") {
    const message = event.message as { role: string; toolCallId?: string };
    return `${event.type} ${message.role}${message.toolCallId ? ` ${message.toolCallId}` : ""}`;
  }
  return event.type;
}

describe("Agent.cancelToolCall", () => {
  it(
    "cancels the long call mid-batch: its result says why, the short call and the run go on",
    marbles((m) => {
      const model = scriptedModel([twoCalls, "done"], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, tools: [slowTool(m.scheduler)], scheduler: m.scheduler });
      const entries = record(agent, m.scheduler);
      const events: AgentEvent[] = [];
      agent.prompt("go").subscribe((event) => events.push(event));
      // The model streams 1..8 (two calls of start, delta, end); tools start at 8.
      m.scheduler.schedule(() => agent.cancelToolCall("long", "the user is in a hurry"), 30);
      m.flush();
      expect(entries.filter((entry) => !/message_(start|end) (user|assistant)|turn_|agent_/.test(entry))).toStrictEqual([
        "8 tool_execution_start long",
        "8 tool_execution_start short",
        "18 tool_execution_end short ok",
        "30 tool_execution_end long error",
        "30 message_start toolResult long",
        "30 message_end toolResult long",
        "30 message_start toolResult short",
        "30 message_end toolResult short",
      ]);
      const results = agent.messages.filter((message): message is ToolResultMessage => (message as { role: string }).role === "toolResult");
      expect(results.map((result) => [result.toolCallId, result.isError, result.content])).toStrictEqual([
        ["long", true, [{ type: "text", text: "Tool call was cancelled: the user is in a hurry" }]],
        ["short", false, [{ type: "text", text: "slept 10" }]],
      ]);
      expect(events[events.length - 1]).toMatchObject({ type: "agent_end", reason: "idle" });
      assertEventGrammar(events);
      expect(agent.isRunning).toBe(false);
    }),
  );

  it(
    "refuses, with an InvalidStateError and nothing changed, an unknown id, a finished call, or a cancel while idle",
    marbles((m) => {
      const model = scriptedModel([twoCalls, "done"], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, tools: [slowTool(m.scheduler)], scheduler: m.scheduler });
      expect(() => agent.cancelToolCall("long")).toThrow(InvalidStateError);
      agent.prompt("go");
      const errors: string[] = [];
      const attempt = (id: string) => {
        try {
          agent.cancelToolCall(id);
        } catch (error) {
          errors.push(`${(error as Error).name}: ${(error as Error).message}`);
        }
      };
      m.scheduler.schedule(() => attempt("nope"), 9);
      m.scheduler.schedule(() => attempt("short"), 20);
      m.flush();
      expect(errors).toStrictEqual([
        'InvalidStateError: Cannot cancel tool call "nope": no unfinished tool call of the running agent has that id.',
        'InvalidStateError: Cannot cancel tool call "short": no unfinished tool call of the running agent has that id.',
      ]);
      expect(agent.messages.filter((message) => (message as { isError?: boolean }).isError === true)).toStrictEqual([]);
    }),
  );

  it(
    "a cancel made as the assistant message ends, before its batch runs, still reaches the call",
    marbles((m) => {
      const model = scriptedModel([twoCalls, "done"], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, tools: [slowTool(m.scheduler)], scheduler: m.scheduler });
      agent.events$.subscribe((event) => {
        if (event.type === "message_end" && (event.message as { role: string }).role === "assistant" && agent.state.pendingToolCalls.length === 0) {
          if ((event.message as { stopReason: string }).stopReason === "toolUse") agent.cancelToolCall("long");
        }
      });
      const entries = record(agent, m.scheduler);
      agent.prompt("go");
      m.flush();
      expect(entries.filter((entry) => entry.includes("tool_execution"))).toStrictEqual([
        "8 tool_execution_start long",
        "8 tool_execution_end long error",
        "8 tool_execution_start short",
        "18 tool_execution_end short ok",
      ]);
    }),
  );
});
