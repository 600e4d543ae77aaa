import { emptyUsage } from "../../src/types/messages.js";
import { Type } from "@sinclair/typebox";
import { EMPTY, NEVER, type Observable, Subject, throwError, VirtualTimeScheduler } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { errorResult, textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentMessage, DrainableQueue } from "../../src/types.js";
import { collect, record } from "../helpers/collect.js";
import { announce, assistantMessage, expectOneResultPerToolCall, streamedReply, toolCall, toolResultMessage, userMessage } from "../testing/fixtures.js";

const prompt = userMessage("Hello", 0);
// Its clock stays at 0: every timestamp of these synchronous runs is 0.
const scheduler = new VirtualTimeScheduler();
const opening: AgentEvent[] = [{ type: "agent_start" }, { type: "turn_start" }, ...announce(prompt)];
const words = (...list: string[]) => ({ type: "text" as const, words: list });
const echo = defineTool({ name: "echo", description: "Echoes", parameters: Type.Object({}), execute: () => textResult("echo") });
const callsEcho = { content: [{ type: "toolCall" as const, id: "e1", name: "echo", arguments: {} }] };

/** A caller's steering queue, with nothing queued, whose parts throw as asked. */
function failingQueue(failures: { drainFrom?: number; peek?: boolean; arrivals?: "getter" | Observable<AgentMessage> }): DrainableQueue {
  let drains = 0;
  return {
    drain: () => {
      drains += 1;
      if (failures.drainFrom !== undefined && drains >= failures.drainFrom) throw new Error("queue store down");
      return [];
    },
    peek: () => {
      if (failures.peek) throw new Error("queue store down");
      return [];
    },
    get arrivals(): Observable<AgentMessage> {
      if (failures.arrivals === "getter") throw new Error("queue store down");
      return failures.arrivals ?? NEVER;
    },
  };
}

describe("a caller's queue that throws ends the run as data", () => {
  it("drain throwing on the second turn: agent_end with reason failed and what failed, not a silent run", () => {
    const model = scriptedModel([callsEcho, "never"]);
    const first = streamedReply([{ type: "toolCall", call: toolCall("e1", "echo") }]);
    const result = toolResultMessage(toolCall("e1", "echo"), "echo");
    const events = collect(agentLoop([prompt], { messages: [], tools: [echo] }, { model, scheduler, steering: failingQueue({ drainFrom: 2 }) }));
    expect(events).toStrictEqual([
      ...opening,
      ...first.events,
      { type: "tool_execution_start", toolCallId: "e1", toolName: "echo", args: {} },
      { type: "tool_execution_end", toolCallId: "e1", toolName: "echo", result: textResult("echo"), isError: false },
      ...announce(result),
      { type: "turn_end", message: first.message, toolResults: [result] },
      { type: "agent_end", messages: [prompt, first.message, result], reason: "failed", errorMessage: "The steering queue failed: queue store down", usage: emptyUsage() },
    ]);
    expect(model.calls).toHaveLength(1);
    expectOneResultPerToolCall(events);
  });

  it("drain throwing before the first call: a failed assistant message, turn_end, agent_end; the model is not called", () => {
    const model = scriptedModel(["never"]);
    const failed = assistantMessage([], { stopReason: "error", errorMessage: "The steering queue failed: queue store down" });
    const events = collect(agentLoop([prompt], { messages: [] }, { model, scheduler, steering: failingQueue({ drainFrom: 1 }) }));
    expect(events).toStrictEqual([
      ...opening,
      ...announce(failed),
      { type: "turn_end", message: failed, toolResults: [] },
      { type: "agent_end", messages: [prompt, failed], reason: "failed", usage: emptyUsage() },
    ]);
    expect(model.calls).toHaveLength(0);
  });

  it("a follow-up queue whose drain throws", () => {
    const model = scriptedModel(["Hi"]);
    const reply = streamedReply([words("Hi")]);
    const events = collect(agentLoop([prompt], { messages: [] }, { model, scheduler, followUp: failingQueue({ drainFrom: 1 }) }));
    expect(events).toStrictEqual([
      ...opening,
      ...reply.events,
      { type: "turn_end", message: reply.message, toolResults: [] },
      { type: "agent_end", messages: [prompt, reply.message], reason: "failed", errorMessage: "The follow-up queue failed: queue store down", usage: emptyUsage() },
    ]);
  });

  const skipped = (queue: DrainableQueue) => {
    const model = scriptedModel([callsEcho, "never"]);
    const first = streamedReply([{ type: "toolCall", call: toolCall("e1", "echo") }]);
    const reason = "The steering queue failed: queue store down";
    const result = toolResultMessage(toolCall("e1", "echo"), reason, { isError: true });
    const events = collect(agentLoop([prompt], { messages: [], tools: [echo] }, { model, scheduler, steering: queue, steeringInterruptsTools: true }));
    expect(events).toStrictEqual([
      ...opening,
      ...first.events,
      { type: "tool_execution_start", toolCallId: "e1", toolName: "echo", args: {} },
      { type: "tool_execution_end", toolCallId: "e1", toolName: "echo", result: errorResult(reason), isError: true },
      ...announce(result),
      { type: "turn_end", message: first.message, toolResults: [result] },
      { type: "agent_end", messages: [prompt, first.message, result], reason: "failed", errorMessage: reason, usage: emptyUsage() },
    ]);
    expectOneResultPerToolCall(events);
  };

  it("peek throwing as a batch starts (steeringInterruptsTools): every call skipped with the failure, then the end", () => {
    skipped(failingQueue({ peek: true }));
  });

  it("arrivals throwing as a batch listens to it: the same", () => {
    skipped(failingQueue({ arrivals: "getter" }));
  });

  it("arrivals erroring while a tool runs: the running call is stopped with the failure, then the end", () => {
    const arrivals = new Subject<AgentMessage>();
    const waits = defineTool({ name: "echo", description: "Never answers", parameters: Type.Object({}), execute: () => NEVER });
    const model = scriptedModel([callsEcho, "never"]);
    const run = record(agentLoop([prompt], { messages: [], tools: [waits] }, { model, scheduler, steering: failingQueue({ arrivals }), steeringInterruptsTools: true }));
    expect(run.values.at(-1)).toStrictEqual({ type: "tool_execution_start", toolCallId: "e1", toolName: "echo", args: {} });
    arrivals.error(new Error("socket closed"));
    const reason = "The steering queue failed: socket closed";
    const result = toolResultMessage(toolCall("e1", "echo"), reason, { isError: true });
    const first = streamedReply([{ type: "toolCall", call: toolCall("e1", "echo") }]);
    expect(run.values.slice(-5)).toStrictEqual([
      { type: "tool_execution_end", toolCallId: "e1", toolName: "echo", result: errorResult(reason), isError: true },
      ...announce(result),
      { type: "turn_end", message: first.message, toolResults: [result] },
      { type: "agent_end", messages: [prompt, first.message, result], reason: "failed", errorMessage: reason, usage: emptyUsage() },
    ]);
    expect([run.completed, run.failure]).toStrictEqual([true, undefined]);
    expectOneResultPerToolCall(run.values);
  });

  it("a queue the run made from an Observable that errors is dropped, and the run goes on", () => {
    const model = scriptedModel(["Hi"]);
    const events = collect(agentLoop([prompt], { messages: [] }, { model, scheduler, steering: throwError(() => new Error("socket")) }));
    expect(events.at(-1)).toStrictEqual({ type: "agent_end", messages: [prompt, streamedReply([words("Hi")]).message], reason: "idle", usage: emptyUsage() });
  });
});

describe("a throw from the loop's own code inside an inner observer", () => {
  it("reaches the run's subscriber as an error instead of leaving the run silent", () => {
    // A scheduler whose clock breaks while a tool runs: stamping the tool's result message throws
    // inside the batch's observer of its calls.
    let broken = false;
    const clock = Object.assign(Object.create(scheduler) as VirtualTimeScheduler, {
      now: () => {
        if (broken) throw new Error("clock broken");
        return 0;
      },
    });
    const breaks = defineTool({ name: "echo", description: "Breaks the clock", parameters: Type.Object({}), execute: () => ((broken = true), textResult("echo")) });
    const model = scriptedModel([callsEcho, "never"]);
    const run = record(agentLoop([prompt], { messages: [], tools: [breaks] }, { model, scheduler: clock }));
    const first = streamedReply([{ type: "toolCall", call: toolCall("e1", "echo") }]);
    expect(run.values).toStrictEqual([
      ...opening,
      ...first.events,
      { type: "tool_execution_start", toolCallId: "e1", toolName: "echo", args: {} },
      { type: "tool_execution_end", toolCallId: "e1", toolName: "echo", result: textResult("echo"), isError: false },
    ]);
    expect(run.failure).toStrictEqual({ error: new Error("clock broken") });
  });

  it("a throw inside the model call's observer (its fallback message) errors the run too", () => {
    // A model that completes without a final event and breaks the clock as it is called:
    // building the error message that stands for the missing one throws.
    let broken = false;
    const clock = Object.assign(Object.create(scheduler) as VirtualTimeScheduler, {
      now: () => {
        if (broken) throw new Error("clock broken");
        return 0;
      },
    });
    const model = { ...scriptedModel([]), stream: () => ((broken = true), EMPTY) };
    const run = record(agentLoop([prompt], { messages: [] }, { model, scheduler: clock }));
    expect(run.values).toStrictEqual(opening);
    expect(run.failure).toStrictEqual({ error: new Error("clock broken") });
  });
});

// A server that numbers its calls per reply sent e1 in both replies: the run had two calls with
// one id (the event grammar refuses it; a UI message got one tool part for two calls).
describe("a model that repeats a tool-call id of an earlier message of the run", () => {
  it("gets the later call renamed, and its events and result carry the new id", () => {
    const model = scriptedModel([callsEcho, callsEcho, "Done."]);
    const events = collect(agentLoop([prompt], { messages: [], tools: [echo] }, { model, scheduler }));
    expectOneResultPerToolCall(events);
    const starts = events.flatMap((event) => (event.type === "tool_execution_start" ? [event.toolCallId] : []));
    const results = events.flatMap((event) => (event.type === "message_end" && event.message.role === "toolResult" ? [event.message.toolCallId] : []));
    expect([starts, results]).toStrictEqual([
      ["e1", "e1_2"],
      ["e1", "e1_2"],
    ]);
  });
});
