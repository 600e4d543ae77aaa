import { describe, expect, it } from "vitest";
import { Type } from "@sinclair/typebox";
import { interval, map, type SchedulerLike, take } from "rxjs";
import { Agent, defineTool, textResult } from "../../src/index.js";
import type { AgentEvent, AgentToolResult } from "../../src/index.js";
import { CompactRunReplay } from "../../src/agent/run-replay.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/index.js";
import { marbles } from "../helpers/marbles.js";
import { assistantMessage, toolCall } from "../testing/fixtures.js";

const result: AgentToolResult<unknown> = { content: [], details: undefined };
const reply = assistantMessage([]);
const start: AgentEvent = { type: "message_start", message: reply };
const update: AgentEvent = { type: "message_update", message: reply, assistantMessageEvent: { type: "start", partial: reply } };
const end: AgentEvent = { type: "message_end", message: reply };
const callStart = (id: string): AgentEvent => ({ type: "tool_execution_start", toolCallId: id, toolName: "t", args: {} });
const callUpdate = (id: string): AgentEvent => ({ type: "tool_execution_update", toolCallId: id, toolName: "t", args: {}, partialResult: result });
const callEnd = (id: string): AgentEvent => ({ type: "tool_execution_end", toolCallId: id, toolName: "t", result, isError: false });

function replayOf(replay: CompactRunReplay<unknown>): AgentEvent[] {
  const seen: AgentEvent[] = [];
  replay.asObservable().subscribe((event) => seen.push(event)).unsubscribe();
  return seen;
}

describe("CompactRunReplay", () => {
  it("replays a late subscriber the lifecycle without the updates of what ended, and the updates of what is open", () => {
    const replay = new CompactRunReplay<unknown>();
    const early: AgentEvent[] = [];
    replay.asObservable().subscribe((event) => early.push(event));
    const emitted = [start, update, update, end, callStart("a"), callStart("b"), callUpdate("a"), callUpdate("b"), callEnd("a"), start, update];
    for (const event of emitted) replay.next(event);
    expect(early).toStrictEqual(emitted);
    expect(replayOf(replay)).toStrictEqual([start, end, callStart("a"), callStart("b"), callUpdate("b"), callEnd("a"), start, update]);
    expect(replay.bufferedCount).toBe(8);
  });

  it("replays the end after the buffer, to a subscriber that comes after it", () => {
    const completed = new CompactRunReplay<unknown>();
    completed.next(start);
    completed.complete();
    const seen: string[] = [];
    completed.asObservable().subscribe({ next: (event) => seen.push(event.type), complete: () => seen.push("complete") });
    const failed = new CompactRunReplay<unknown>();
    failed.next(start);
    failed.error(new Error("boom"));
    failed.next(end);
    failed.asObservable().subscribe({ next: (event) => seen.push(event.type), error: (error: Error) => seen.push(error.message) });
    expect(seen).toStrictEqual(["message_start", "complete", "message_start", "boom"]);
  });

  it("keeps only lifecycle events of 2,000 finished streamed calls, in order, while an open call keeps its updates", () => {
    const replay = new CompactRunReplay<unknown>();
    replay.next(callStart("open"));
    replay.next(callUpdate("open"));
    const expected: AgentEvent[] = [callStart("open"), callUpdate("open")];
    for (let call = 0; call < 2_000; call++) {
      const id = `call-${call}`;
      replay.next(start);
      for (let delta = 0; delta < 5; delta++) replay.next(update);
      replay.next(end);
      replay.next(callStart(id));
      replay.next(callUpdate(id));
      replay.next(callUpdate(id));
      replay.next(callEnd(id));
      expected.push(start, end, callStart(id), callEnd(id));
    }
    replay.next(callUpdate("open"));
    expected.push(callUpdate("open"));
    expect(replay.bufferedCount).toBe(8_003);
    expect(replayOf(replay)).toStrictEqual(expected);
    replay.next(callEnd("open"));
    expect(replay.bufferedCount).toBe(8_002);
  });
});

function steppedTool(scheduler: SchedulerLike) {
  return defineTool({
    name: "stepped",
    description: "Reports two steps, then its result",
    parameters: Type.Object({}),
    execute: () => interval(1, scheduler).pipe(take(3), map((step) => textResult(`step ${step}`))),
  });
}

const toolTurn: ScriptedTurn = { content: [toolCall("call-a", "stepped")] };

function types(events: readonly AgentEvent[]): string[] {
  return events.map((event) => event.type);
}

describe("Agent runReplay", () => {
  it(
    "compact: a subscriber that comes mid-run or after the end is replayed no update of what ended; prompt's early subscriber gets every event",
    marbles((m) => {
      const model = scriptedModel([toolTurn, "done"], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, tools: [steppedTool(m.scheduler)], scheduler: m.scheduler, runReplay: "compact" });
      const early: AgentEvent[] = [];
      const late: AgentEvent[] = [];
      const run = agent.prompt("go");
      run.subscribe((event) => early.push(event));
      let openLate: AgentEvent[] | undefined;
      const { currentRun$ } = agent;
      // Frame 7: the first reply has ended and the tool has reported its first step.
      m.scheduler.schedule(() => {
        openLate = [];
        const seen = openLate;
        currentRun$?.subscribe((event) => seen.push(event)).unsubscribe();
      }, 7);
      m.flush();
      run.subscribe((replayed) => late.push(replayed));
      const lifecycle = types(early).filter((type) => type !== "message_update" && type !== "tool_execution_update");
      expect(types(early).filter((type) => type === "message_update").length).toBeGreaterThan(0);
      expect(types(early).filter((type) => type === "tool_execution_update")).toStrictEqual(["tool_execution_update", "tool_execution_update"]);
      expect(types(late)).toStrictEqual(lifecycle);
      expect(late.filter((event) => event.type === "message_end")).toStrictEqual(early.filter((event) => event.type === "message_end"));
      expect(types(openLate ?? [])).toStrictEqual([...lifecycle.slice(0, lifecycle.indexOf("tool_execution_start") + 1), "tool_execution_update"]);
    }),
  );

  it(
    "full (the default): a late subscriber is replayed every event",
    marbles((m) => {
      const model = scriptedModel([toolTurn, "done"], { scheduler: m.scheduler, delay: 1 });
      const agent = new Agent({ model, tools: [steppedTool(m.scheduler)], scheduler: m.scheduler });
      const early: AgentEvent[] = [];
      const late: AgentEvent[] = [];
      const run = agent.prompt("go");
      run.subscribe((event) => early.push(event));
      m.flush();
      run.subscribe((event) => late.push(event));
      expect(late).toStrictEqual(early);
      expect(types(late)).toContain("tool_execution_update");
    }),
  );

  it("compact: run() resolves with the run's messages", async () => {
    const agent = new Agent({ model: scriptedModel([toolTurn, "done"]), tools: [defineTool({ name: "stepped", description: "d", parameters: Type.Object({}), execute: () => textResult("ok") })], runReplay: "compact" });
    const messages = await agent.run("go");
    expect(messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
  });
});
