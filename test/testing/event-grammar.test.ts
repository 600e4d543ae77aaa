import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar, checkEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, ToolResultMessage } from "../../src/types.js";
import { userMessage } from "./fixtures.js";

/** A well-formed run: a turn with two tool calls (x, y), then a text turn. */
function validRun(): AgentEvent[] {
  const echo = defineTool({ name: "echo", description: "e", parameters: Type.Object({}), execute: (id) => textResult(id) });
  const model = scriptedModel([
    { content: [{ type: "toolCall", id: "x", name: "echo", arguments: {} }, { type: "toolCall", id: "y", name: "echo", arguments: {} }] },
    "Done",
  ]);
  const events: AgentEvent[] = [];
  agentLoop([userMessage("go")], { messages: [], tools: [echo] }, { model }).subscribe((event) => events.push(event));
  return events;
}

const indexOf = (events: AgentEvent[], predicate: (event: AgentEvent) => boolean) => {
  const index = events.findIndex(predicate);
  if (index < 0) throw new Error("no such event");
  return index;
};
const isResultEnd = (id: string) => (event: AgentEvent) =>
  event.type === "message_end" && (event.message as ToolResultMessage).toolCallId === id;
const isResultStart = (id: string) => (event: AgentEvent) =>
  event.type === "message_start" && (event.message as ToolResultMessage).toolCallId === id;
const without = (events: AgentEvent[], ...indexes: number[]) => events.filter((_, index) => !indexes.includes(index));
const swap = (events: AgentEvent[], a: number, b: number) => {
  const copy = [...events];
  [copy[a], copy[b]] = [copy[b]!, copy[a]!];
  return copy;
};

describe("checkEventGrammar", () => {
  it("accepts a real run, and a run cut short by unsubscribing when told so", () => {
    const events = validRun();
    expect(checkEventGrammar(events)).toStrictEqual([]);
    expect(() => assertEventGrammar(events)).not.toThrow();
    expect(checkEventGrammar(events.slice(0, 6), { complete: false })).toStrictEqual([]);
  });

  const cases: [string, (events: AgentEvent[]) => AgentEvent[], string][] = [
    ["no agent_start first", (events) => events.slice(1), "#0 turn_start: the first event must be agent_start"],
    ["a second agent_start", (events) => [events[0]!, ...events], "#1 agent_start: agent_start must come once, first"],
    ["no agent_end", (events) => events.slice(0, -1), "the run has no agent_end"],
    ["events after agent_end", (events) => [...events, { type: "turn_start" }], "event after agent_end"],
    ["agent_end in an unsubscribed run", (events) => events, "an unsubscribed run must not emit agent_end"],
    ["a nested turn", (events) => [events[0]!, events[1]!, ...events.slice(1)], "turn_start inside an open turn"],
    ["turn_end without turn_start", (events) => without(events, 1), "message outside a turn"],
    ["a message_end without message_start", (events) => without(events, 2), "message_end without message_start"],
    ["nested messages", (events) => swap(events, 3, 4), "message_start while another message is open"],
    [
      "an update outside an assistant message",
      (events) => {
        const update = events.find((event) => event.type === "message_update")!;
        return [...events.slice(0, 3), update, ...events.slice(3)];
      },
      "message_update outside an assistant message",
    ],
    [
      "a tool call without a result",
      (events) => without(events, indexOf(events, isResultStart("y")), indexOf(events, isResultEnd("y"))),
      "tool calls without a result: y",
    ],
    [
      "results out of call order",
      (events) => {
        const x = indexOf(events, isResultStart("x"));
        const y = indexOf(events, isResultStart("y"));
        const copy = [...events];
        copy.splice(x, 2, events[y]!, events[y + 1]!);
        copy.splice(y, 2, events[x]!, events[x + 1]!);
        return copy;
      },
      "tool result for y, expected x (source order)",
    ],
    [
      "a duplicate result",
      (events) => {
        const y = indexOf(events, isResultEnd("y"));
        return [...events.slice(0, y + 1), events[y - 1]!, events[y]!, ...events.slice(y + 1)];
      },
      "unexpected tool result for y",
    ],
    [
      "a tool end without start",
      (events) => without(events, indexOf(events, (event) => event.type === "tool_execution_start" && event.toolCallId === "x")),
      "end for tool x that is not running",
    ],
    [
      "a tool started twice",
      (events) => {
        const start = indexOf(events, (event) => event.type === "tool_execution_start" && event.toolCallId === "x");
        return [...events.slice(0, start + 1), events[start]!, ...events.slice(start + 1)];
      },
      "tool x started twice",
    ],
    [
      "a tool still running at turn_end",
      (events) => without(events, indexOf(events, (event) => event.type === "tool_execution_end" && event.toolCallId === "y")),
      "turn_end while tools run: y",
    ],
    [
      "turn_end with another assistant message",
      (events) => events.map((event, index) => (index === indexOf(events, (e) => e.type === "turn_end") && event.type === "turn_end" ? { ...event, message: { ...event.message, content: [] } } : event)),
      "turn_end.message is not the turn's assistant message",
    ],
    [
      "turn_end.toolResults that differ from the result messages",
      (events) => events.map((event) => (event.type === "turn_end" && event.toolResults.length === 2 ? { ...event, toolResults: [event.toolResults[1]!] } : event)),
      "turn_end.toolResults differ from the turn's tool result messages",
    ],
    [
      "agent_end.messages that differ from the ended messages",
      (events) => events.map((event) => (event.type === "agent_end" ? { ...event, messages: event.messages.slice(1) } : event)),
      "agent_end.messages differ from the messages that ended",
    ],
  ];

  for (const [name, corrupt, problem] of cases) {
    it(`flags ${name}`, () => {
      const complete = name !== "agent_end in an unsubscribed run";
      const problems = checkEventGrammar(corrupt(validRun()), { complete });
      expect(problems.some((text) => text.includes(problem)), `problems: ${JSON.stringify(problems)}`).toBe(true);
    });
  }

  it("assertEventGrammar throws with every problem and the event types", () => {
    expect(() => assertEventGrammar(validRun().slice(1, -1))).toThrow(
      /^Malformed agent event sequence:\n#0 turn_start: the first event must be agent_start\n#\d+ end: the run has no agent_end\nTypes: turn_start, /,
    );
  });
});
