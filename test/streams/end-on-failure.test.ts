import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { AgentEvent, AgentToolResult } from "../../src/types.js";
import { deepArgumentsModel } from "../helpers/deep-json.js";
import { userMessage } from "../testing/fixtures.js";

/** A result whose `content` throws whenever it is read: the loop's check of the result finds it, and the call fails. */
function poisonedResult(): AgentToolResult {
  return Object.defineProperty({ details: {} }, "content", {
    get() {
      throw new Error("content exploded");
    },
  }) as unknown as AgentToolResult;
}

/**
 * A result whose `content` reads well the two times the loop's check of the result reads it, and
 * throws from then on: no check foresees that, so the loop itself fails further on.
 */
function treacherousResult(): AgentToolResult {
  let reads = 0;
  return Object.defineProperty({ details: {} }, "content", {
    get() {
      if (reads++ < 2) return [{ type: "text", text: "fine so far" }];
      throw new Error("content exploded");
    },
  }) as unknown as AgentToolResult;
}

const treacherous = defineTool({ name: "treacherous", description: "Returns a result that turns on the loop", parameters: Type.Object({}), execute: treacherousResult });

function types(events: AgentEvent[]): string[] {
  return events.map((event) => event.type).filter((type) => type !== "message_update");
}

describe("a run always ends (issue 27, item 2)", () => {
  it("ends a run whose own machinery throws with a result for the call, turn_end and agent_end (failed)", async () => {
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name: "treacherous", arguments: {} }] }, "never asked"]);
    const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [treacherous] }, { model }).pipe(toArray()));

    expect(types(events)).toStrictEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
    assertEventGrammar(events);
    // The tool's own result passed its check: its end says so; making its message is what failed.
    expect(events.find((event) => event.type === "tool_execution_end")).toMatchObject({ toolCallId: "call_1", isError: false });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "failed", errorMessage: "The run failed: content exploded" });
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult"]);
  });

  it("ends the calls still running when the loop fails with one tool_execution_end each, and none for a call of an earlier turn", async () => {
    const instant = defineTool({ name: "instant", description: "Answers at once", parameters: Type.Object({}), execute: () => ({ content: [{ type: "text", text: "ok" }], details: {} }) });
    const waiting = defineTool({ name: "waiting", description: "Never answers", parameters: Type.Object({}), execute: () => new Promise<AgentToolResult>(() => undefined) });
    const call = (id: string, name: string) => ({ type: "toolCall" as const, id, name, arguments: {} });
    const model = scriptedModel([
      { content: [call("call_1", "instant")] },
      { content: [call("call_2", "waiting"), call("call_3", "waiting"), call("call_4", "treacherous")] },
      "never asked",
    ]);
    const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [instant, waiting, treacherous] }, { model }).pipe(toArray()));

    const ends = events.flatMap((event) => (event.type === "tool_execution_end" ? [`${event.toolCallId} ${event.isError ? "error" : "ok"}`] : []));
    // call_4's result passed its check and ended; making its message fails the loop, which then
    // ends the calls still running, in the order they started.
    expect(ends).toStrictEqual(["call_1 ok", "call_4 ok", "call_2 error", "call_3 error"]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "failed", errorMessage: "The run failed: content exploded" });
  });

  it("answers arguments nested 4,000 deep (TypeBox's Value.Clone path) with a readable error, and the run goes on", async () => {
    const withDefault = defineTool({
      name: "echo",
      description: "Echoes",
      parameters: Type.Object({ items: Type.Array(Type.Unknown()), note: Type.Optional(Type.String({ default: "none" })) }),
      execute: () => ({ content: [{ type: "text", text: "echoed" }], details: {} }),
    });
    const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [withDefault] }, { model: deepArgumentsModel("echo", 4000) }).pipe(toArray()));

    assertEventGrammar(events);
    const result = events.find((event) => event.type === "tool_execution_end");
    expect(result).toMatchObject({ isError: true, result: { content: [{ type: "text", text: 'Invalid arguments for tool "echo": arguments nest deeper than 128 levels.' }] } });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
    // Every event can be written out: nothing in them nests too deep any more.
    expect(() => JSON.stringify(events)).not.toThrow();
  });
});

describe("a tool's poisoned result from a Promise", () => {
  it("is the tool's failure, not an unhandled rejection", async () => {
    const promised = defineTool({ name: "promised", description: "Resolves a poisoned result", parameters: Type.Object({}), execute: () => Promise.resolve(poisonedResult()) });
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name: "promised", arguments: {} }] }, "fine"]);
    const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [promised] }, { model }).pipe(toArray()));

    assertEventGrammar(events);
    expect(events.find((event) => event.type === "tool_execution_end")).toMatchObject({ isError: true, result: { content: [{ type: "text", text: 'Tool "promised" returned a result that could not be read: content exploded' }] } });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
  });
});
