import { Type } from "@sinclair/typebox";
import { map, timer, type SchedulerLike } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent, defineTool, InvalidStateError, textResult } from "../../src/index.js";
import type { AgentEvent, AgentState, ToolResultMessage } from "../../src/index.js";
import { assertEventGrammar, scriptedModel, type ScriptedTurn } from "../../src/testing/index.js";
import { marbles } from "../helpers/marbles.js";

function tools(scheduler: SchedulerLike) {
  const deploy = defineTool({
    name: "deploy",
    description: "Deploys; a person must approve",
    parameters: Type.Object({ target: Type.String() }),
    needsApproval: true,
    execute: (_id, { target }) => timer(5, scheduler).pipe(map(() => textResult(`deployed to ${target}`))),
  });
  const read = defineTool({
    name: "read",
    description: "Reads",
    parameters: Type.Object({}),
    execute: () => timer(10, scheduler).pipe(map(() => textResult("read it"))),
  });
  return [deploy, read];
}

const batch: ScriptedTurn = {
  content: [
    { type: "toolCall", id: "d1", name: "deploy", arguments: { target: "prod" } },
    { type: "toolCall", id: "r1", name: "read", arguments: {} },
  ],
};

function resultsOf(agent: Agent): [string, boolean, string][] {
  return agent.messages
    .filter((message): message is ToolResultMessage => (message as { role: string }).role === "toolResult")
    .map((result) => [result.toolCallId, result.isError, result.content.map((part) => (part.type === "text" ? part.text : "")).join("")]);
}

describe("Agent approvals", () => {
  it(
    "shows a waiting call in state.pendingApprovals (not as running), and approve lets it run",
    marbles((m) => {
      const agent = new Agent({ model: scriptedModel([batch, "done"], { scheduler: m.scheduler, delay: 1 }), tools: tools(m.scheduler), scheduler: m.scheduler });
      const events: AgentEvent[] = [];
      agent.prompt("go").subscribe((event) => events.push(event));
      let waiting: AgentState | undefined;
      m.scheduler.schedule(() => {
        waiting = agent.state;
        agent.approve("d1");
      }, 30);
      m.flush();
      // The model streams until 8; the read runs 8..18, the deploy waits until 30 and runs to 35.
      expect(waiting?.pendingApprovals).toStrictEqual([{ toolCallId: "d1", toolName: "deploy", args: { target: "prod" }, since: 8 }]);
      expect(waiting?.pendingToolCalls).toStrictEqual([]);
      expect(resultsOf(agent)).toStrictEqual([
        ["d1", false, "deployed to prod"],
        ["r1", false, "read it"],
      ]);
      expect(agent.state.pendingApprovals).toStrictEqual([]);
      expect(events.filter((event) => event.type.startsWith("tool_")).map((event) => `${event.type} ${(event as { toolCallId: string }).toolCallId}`)).toStrictEqual([
        "tool_execution_start d1",
        "tool_approval_start d1",
        "tool_execution_start r1",
        "tool_execution_end r1",
        "tool_approval_end d1",
        "tool_execution_end d1",
      ]);
      assertEventGrammar(events);
    }),
  );

  it(
    "deny makes the call's error result with the reason, and the run goes on",
    marbles((m) => {
      const agent = new Agent({ model: scriptedModel([batch, "done"], { scheduler: m.scheduler, delay: 1 }), tools: tools(m.scheduler), scheduler: m.scheduler });
      const events: AgentEvent[] = [];
      agent.prompt("go").subscribe((event) => events.push(event));
      m.scheduler.schedule(() => agent.deny("d1", "not on a Friday"), 12);
      m.flush();
      expect(resultsOf(agent)).toStrictEqual([
        ["d1", true, "Tool call was denied: not on a Friday"],
        ["r1", false, "read it"],
      ]);
      expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
      assertEventGrammar(events);
    }),
  );

  it(
    "abort settles a pending approval; cancelToolCall ends one; approve or deny of a call not waiting is an InvalidStateError",
    marbles((m) => {
      const agent = new Agent({ model: scriptedModel([batch, "done", batch, "done"], { scheduler: m.scheduler, delay: 1 }), tools: tools(m.scheduler), scheduler: m.scheduler });
      expect(() => agent.approve("d1")).toThrow(InvalidStateError);
      const errors: string[] = [];
      agent.prompt("go");
      m.scheduler.schedule(() => {
        for (const attempt of [() => agent.approve("r1"), () => agent.deny("nope")]) {
          try {
            attempt();
          } catch (error) {
            errors.push((error as Error).message);
          }
        }
        agent.cancelToolCall("d1", "changed my mind");
      }, 12);
      m.flush();
      expect(errors).toStrictEqual([
        'Cannot approve tool call "r1": it is not waiting for approval.',
        'Cannot deny tool call "nope": it is not waiting for approval.',
      ]);
      expect(resultsOf(agent)).toStrictEqual([
        ["d1", true, "Tool call was cancelled: changed my mind"],
        ["r1", false, "read it"],
      ]);
      const events: AgentEvent[] = [];
      agent.prompt("again").subscribe((event) => events.push(event));
      m.scheduler.schedule(() => agent.abort(), 20);
      m.flush();
      expect(agent.state.pendingApprovals).toStrictEqual([]);
      // The read had finished (8..18); the deploy still waited at 20.
      expect(resultsOf(agent).slice(2)).toStrictEqual([
        ["d1", true, "Tool execution was aborted."],
        ["r1", false, "read it"],
      ]);
      expect(agent.isRunning).toBe(false);
      assertEventGrammar(events);
    }),
  );
});
