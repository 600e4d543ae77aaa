import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { agentTool } from "../../src/agents/agent-tool.js";
import { InvalidStateError } from "../../src/errors.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, ToolResultMessage } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";
import type { TestScheduler } from "rxjs/testing";

/** An agent whose researcher's nested `write` needs approval; what ran is logged. */
function setUp(scheduler: TestScheduler, researcherTimeoutMs?: number) {
  const log: string[] = [];
  const write = defineTool({
    name: "write",
    description: "Writes a note",
    parameters: Type.Object({ text: Type.String() }),
    needsApproval: true,
    execute: (_id, { text }) => {
      log.push(`wrote ${text} at ${scheduler.now()}`);
      return textResult("written");
    },
  });
  const researcher = agentTool({
    name: "researcher",
    description: "Researches and writes notes",
    tools: [write],
    model: scriptedModel([{ content: [{ type: "toolCall", id: "w1", name: "write", arguments: { text: "hi" } }] }, "Noted."], { scheduler, delay: 1 }),
    scheduler,
    ...(researcherTimeoutMs === undefined ? {} : { timeoutMs: researcherTimeoutMs }),
  });
  const agent = new Agent({
    model: scriptedModel([{ content: [{ type: "toolCall", id: "r1", name: "researcher", arguments: { task: "note it" } }] }, "Done"], { scheduler, delay: 1 }),
    tools: [researcher],
    scheduler,
  });
  const events: AgentEvent[] = [];
  agent.prompt("go").subscribe((event) => events.push(event));
  return { agent, events, log };
}

const resultsOf = (agent: Agent) =>
  agent.messages.filter((message): message is ToolResultMessage => (message as { role: string }).role === "toolResult").map((result) => [result.toolCallId, result.isError, result.content]);

describe("agentTool approvals", () => {
  it(
    "shows a nested call waiting for approval in the parent agent's pendingApprovals, and runs it once approved there",
    marbles((m) => {
      const { agent, events, log } = setUp(m.scheduler);
      // The parent's reply streams at 1..5, the nested one at 6..10: the nested call waits from 10.
      m.scheduler.schedule(() => {
        expect(agent.state.pendingApprovals).toStrictEqual([{ toolCallId: "w1", toolName: "write", args: { text: "hi" }, since: 10, parentToolCallId: "r1" }]);
        agent.approve("w1");
        expect(agent.state.pendingApprovals).toStrictEqual([]);
      }, 20);
      m.flush();
      expect(log).toStrictEqual(["wrote hi at 20"]);
      expect(resultsOf(agent)).toStrictEqual([["r1", false, [{ type: "text", text: "Noted." }]]]);
      expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
      assertEventGrammar(events);
    }),
  );

  it(
    "denies a nested call from the parent agent: the sub-agent reads the denial and goes on",
    marbles((m) => {
      const { agent, events, log } = setUp(m.scheduler);
      m.scheduler.schedule(() => agent.deny("w1", "not today"), 20);
      m.flush();
      expect(log).toStrictEqual([]);
      expect(resultsOf(agent)).toStrictEqual([["r1", false, [{ type: "text", text: "Noted." }]]]);
      expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
    }),
  );

  it(
    "drops the nested call from pendingApprovals when the parent's call is cancelled",
    marbles((m) => {
      const { agent, events } = setUp(m.scheduler);
      m.scheduler.schedule(() => expect(agent.state.pendingApprovals.map((pending) => pending.toolCallId)).toStrictEqual(["w1"]), 19);
      // The nested run is torn down with no event of its own: the parent's tool_execution_end clears its wait.
      m.scheduler.schedule(() => agent.cancelToolCall("r1", "enough"), 20);
      m.scheduler.schedule(() => expect(agent.state.pendingApprovals).toStrictEqual([]), 21);
      m.flush();
      expect(resultsOf(agent)).toStrictEqual([["r1", true, [{ type: "text", text: "Tool call was cancelled: enough" }]]]);
      expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
    }),
  );

  it(
    "refuses to cancel a sub-agent's waiting call by its own id, saying to deny it or cancel the call that runs the sub-agent",
    marbles((m) => {
      const { agent, events } = setUp(m.scheduler);
      // The parent's cancels do not reach the sub-agent's calls: accepting it would leave the call waiting.
      m.scheduler.schedule(() => {
        expect(() => agent.cancelToolCall("w1", "no")).toThrow(
          new InvalidStateError('Cannot cancel tool call "w1": it is a call of the sub-agent that tool call "r1" runs, waiting for approval. Deny it (deny("w1")), or cancel "r1" to stop the sub-agent.'),
        );
        agent.deny("w1", "no");
      }, 20);
      m.flush();
      expect(resultsOf(agent)).toStrictEqual([["r1", false, [{ type: "text", text: "Noted." }]]]);
      expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
    }),
  );

  it(
    "a nested wait counts against the agent tool's timeoutMs: past it the call fails and the wait leaves pendingApprovals",
    marbles((m) => {
      // The call starts at 5 and the nested call waits from 10; 100 ms run out at 105.
      const { agent, events, log } = setUp(m.scheduler, 100);
      m.scheduler.schedule(() => expect(agent.state.pendingApprovals.map((pending) => pending.toolCallId)).toStrictEqual(["w1"]), 104);
      m.scheduler.schedule(() => expect(agent.state.pendingApprovals).toStrictEqual([]), 106);
      m.flush();
      expect(log).toStrictEqual([]);
      expect(resultsOf(agent)).toStrictEqual([["r1", true, [{ type: "text", text: 'Tool "researcher" timed out after 100 ms' }]]]);
      expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
    }),
  );
});
