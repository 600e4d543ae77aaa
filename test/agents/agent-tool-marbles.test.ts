import { Type } from "@sinclair/typebox";
import { filter, map, timer } from "rxjs";
import { describe, it } from "vitest";
import { agentTool } from "../../src/agents/agent-tool.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent } from "../../src/types.js";
import { subAgentUpdateOf } from "../../src/types/sub-agent.js";
import { marbles } from "../helpers/marbles.js";
import { timeline } from "../helpers/timeline.js";
import { userMessage } from "../testing/fixtures.js";

/** One event as a short label: the parent's by type, the sub-agent's as `researcher> type`; the parent's message updates are left out. */
function label(event: AgentEvent): string | undefined {
  const nested = subAgentUpdateOf(event);
  if (nested) return `${nested.agent}> ${nested.event.type}`;
  if (event.type === "message_update") return undefined;
  if (event.type === "tool_execution_start" || event.type === "tool_execution_end") return `${event.type} ${event.toolCallId}`;
  if (event.type === "message_start" || event.type === "message_end") return `${event.type} ${(event.message as { role: string }).role}`;
  return event.type;
}

describe("agentTool in virtual time", () => {
  it(
    "interleaves the sub-agent's events with the parent's own tool, live, inside the parent's turn",
    marbles((m) => {
      const clock = defineTool({
        name: "clock",
        description: "Tells the time, slowly",
        parameters: Type.Object({}),
        execute: () => timer(25, m.scheduler).pipe(map(() => textResult("noon"))),
      });
      const researcher = agentTool({
        name: "researcher",
        description: "Researches",
        model: scriptedModel(["Found it"], { scheduler: m.scheduler, delay: 10 }),
        scheduler: m.scheduler,
      });
      const parentModel = scriptedModel(
        [
          {
            content: [
              { type: "toolCall", id: "r1", name: "researcher", arguments: { task: "look" } },
              { type: "toolCall", id: "c1", name: "clock", arguments: {} },
            ],
          },
          "Done",
        ],
        { scheduler: m.scheduler, delay: 20 },
      );
      const labels$ = agentLoop([userMessage("Go")], { messages: [], tools: [researcher, clock] }, { model: parentModel, scheduler: m.scheduler }).pipe(
        map(label),
        filter((value) => value !== undefined),
      );
      // The parent's reply streams 20..160 (two tool calls); both calls start at 160. The sub-agent's
      // reply streams 170..220 while the clock, a sibling call, ends at 185 in between; the batch's
      // results come once both have ended, then the parent's second turn answers 240..320.
      m.expect(labels$).toBeObservable(
        ...timeline({
          0: ["agent_start", "turn_start", "message_start user", "message_end user"],
          20: ["message_start assistant"],
          160: [
            "message_end assistant",
            "tool_execution_start r1",
            "researcher> agent_start",
            "researcher> turn_start",
            "researcher> message_start",
            "researcher> message_end",
            "tool_execution_start c1",
          ],
          170: ["researcher> message_start"],
          180: ["researcher> message_update"],
          185: ["tool_execution_end c1"],
          190: ["researcher> message_update"],
          200: ["researcher> message_update"],
          210: ["researcher> message_update"],
          220: [
            "researcher> message_end",
            "researcher> turn_end",
            "tool_execution_end r1",
            "message_start toolResult",
            "message_end toolResult",
            "message_start toolResult",
            "message_end toolResult",
            "turn_end",
            "turn_start",
          ],
          240: ["message_start assistant"],
          320: ["message_end assistant", "turn_end", "agent_end"],
        }),
      );
    }),
  );
});
