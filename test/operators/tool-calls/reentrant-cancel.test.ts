import { Type } from "@sinclair/typebox";
import { map, type SchedulerLike, Subject, timer } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentLoop, defineTool, textResult } from "../../../src/index.js";
import type { AgentEvent, ToolCallCancellation } from "../../../src/index.js";
import { assertEventGrammar, scriptedModel, type ScriptedTurn } from "../../../src/testing/index.js";
import { marbles } from "../../helpers/marbles.js";
import { userMessage } from "../../testing/fixtures.js";

/**
 * A cancel sent from inside an event handler reaches the batch while it is emitting that very
 * event (re-entrant). Whatever is cancelled then (the call whose start or end is being emitted,
 * or every call), each call still gets exactly one tool_execution_end and one result message.
 * (A report said a cancel from a tool_execution_end handler could emit a second end; these
 * cases did not show it, and keep it so.)
 */
const modes = [
  "the same call, tools answering at once",
  "every call, tools answering at once",
  "the same call, tools on timers",
  "every call, tools on timers",
  "the same call and every call",
] as const;

/** Three calls: "a" as the mode says, "b" on a 10 ms timer, "c" at once. */
function threeCalls(mode: (typeof modes)[number], scheduler: SchedulerLike) {
  const tool = defineTool({
    name: "wait",
    description: "Answers after `ms` milliseconds",
    parameters: Type.Object({ ms: Type.Number() }),
    execute: (_id, { ms }) => (ms === 0 ? textResult("now") : timer(ms, scheduler).pipe(map(() => textResult(`waited ${ms}`)))),
  });
  const calls: ScriptedTurn = {
    content: [
      { type: "toolCall", id: "a", name: "wait", arguments: { ms: mode.includes("at once") ? 0 : 5 } },
      { type: "toolCall", id: "b", name: "wait", arguments: { ms: 10 } },
      { type: "toolCall", id: "c", name: "wait", arguments: { ms: 0 } },
    ],
  };
  return { tool, model: scriptedModel([calls, "done"], { scheduler, delay: 1 }) };
}

describe("a cancel sent from inside a tool event handler", () => {
  for (const mode of modes) {
    for (const maxConcurrency of [Infinity, 1]) {
      it(
        `${mode}${maxConcurrency === 1 ? ", one call at a time" : ""}: one end and one result per call`,
        marbles((m) => {
          const { tool, model } = threeCalls(mode, m.scheduler);
          const cancellations = new Subject<ToolCallCancellation>();
          const events: AgentEvent[] = [];
          agentLoop([userMessage("go")], { messages: [], tools: [tool] }, { model, scheduler: m.scheduler, cancellations, maxConcurrency }).subscribe((event) => {
            events.push(event);
            if (event.type !== "tool_execution_end" && event.type !== "tool_execution_start") return;
            if (mode.startsWith("the same call")) cancellations.next({ toolCallId: event.toolCallId, reason: "cancelled from its own event" });
            if (mode.includes("every call")) for (const id of ["a", "b", "c"]) cancellations.next({ toolCallId: id, reason: "cancelled from an event" });
          });
          m.flush();
          assertEventGrammar(events);
          const ends = events.flatMap((event) => (event.type === "tool_execution_end" ? [event.toolCallId] : []));
          expect(ends.sort()).toStrictEqual(["a", "b", "c"]);
          const results = events.filter((event) => event.type === "message_end" && event.message.role === "toolResult");
          expect(results).toHaveLength(3);
          // The cancels arrived: "b", still on its timer when the first events came, was stopped.
          const endOfB = events.find((event) => event.type === "tool_execution_end" && event.toolCallId === "b");
          expect(endOfB).toMatchObject({ isError: true, result: { content: [{ type: "text", text: expect.stringMatching(/^Tool call was cancelled: cancelled from/) }] } });
        }),
      );
    }
  }
});
