import { emptyUsage } from "../../src/types/messages.js";
import { Type } from "@sinclair/typebox";
import type { Context } from "rxjs-marbles";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { errorResult, textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentLoopConfig, AgentMessage, AgentToolResult } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";
import { announce, expectOneResultPerToolCall, streamedReply, toolCall, toolResultMessage, userMessage } from "../testing/fixtures.js";
import { timeline } from "../helpers/timeline.js";

const prompt = userMessage("Hello", 0);

/**
 * A turn with two tool calls whose bodies are cold Observables:
 *   a: 50ms (a|)     b: 30ms (b|)
 * (each value completes its Observable, so it is the result, not a tool_execution_update);
 * the model answers synchronously (delay 0): call a and b, then "Done".
 */
function setup(m: Context, config: Partial<AgentLoopConfig> = {}) {
  const results: Record<"a" | "b", AgentToolResult> = { a: textResult("A"), b: textResult("B") };
  const colds = { a: m.cold<AgentToolResult>("50ms (a|)", results), b: m.cold<AgentToolResult>("30ms (b|)", results) };
  const signals: Record<string, AbortSignal> = {};
  const work = defineTool({
    name: "work",
    description: "w",
    parameters: Type.Object({}),
    execute: (id, _args, { signal }) => {
      signals[id] = signal;
      return colds[id as "a" | "b"];
    },
  });
  const model = scriptedModel(
    [{ content: [{ type: "toolCall", id: "a", name: "work", arguments: {} }, { type: "toolCall", id: "b", name: "work", arguments: {} }] }, "Done"],
    { scheduler: m.scheduler },
  );
  const calls = { a: toolCall("a", "work"), b: toolCall("b", "work") };
  const reply = streamedReply([{ type: "toolCall", call: calls.a }, { type: "toolCall", call: calls.b }]);
  const recorded: AgentEvent[] = [];
  const run$ = agentLoop([prompt], { messages: [], tools: [work] }, { model, scheduler: m.scheduler, ...config });
  /** Until frame 30: the model answers at once, both calls start, b ends. */
  const openingFrames: Record<number, AgentEvent[]> = {
    0: [
      { type: "agent_start" },
      { type: "turn_start" },
      ...announce(prompt),
      ...reply.events,
      { type: "tool_execution_start", toolCallId: "a", toolName: "work", args: {} },
      { type: "tool_execution_start", toolCallId: "b", toolName: "work", args: {} },
    ],
    30: [{ type: "tool_execution_end", toolCallId: "b", toolName: "work", result: results.b, isError: false }],
  };
  const opening = [...openingFrames[0]!, ...openingFrames[30]!];
  const failedEnd = (id: "a" | "b", text: string): AgentEvent => ({
    type: "tool_execution_end",
    toolCallId: id,
    toolName: "work",
    result: errorResult(text),
    isError: true,
  });
  return { colds, signals, model, calls, reply, recorded, run$, opening, openingFrames, failedEnd };
}

describe("tool batches in the loop", () => {
  it(
    "steeringInterruptsTools: steering aborts the running call, then starts the next turn with the steering message",
    marbles((m) => {
      const steer = userMessage("Stop, do X instead", 40);
      const { colds, signals, model, calls, reply, run$, opening, openingFrames, failedEnd } = setup(m, {
        steeringInterruptsTools: true,
        steering: m.hot<AgentMessage>("40ms s", { s: steer }),
      });
      const skipped = "Skipped due to queued user message.";
      const resultA = toolResultMessage(calls.a, skipped, { isError: true, timestamp: 40 });
      const resultB = toolResultMessage(calls.b, "B", { timestamp: 30 });
      const done = streamedReply([{ type: "text", words: ["Done"] }], { timestamp: 40 });
      // At 40 the steering arrives: a is skipped, and the next turn runs at once.
      const atSteering: AgentEvent[] = [
        failedEnd("a", skipped),
        ...announce(resultA),
        ...announce(resultB),
        { type: "turn_end", message: reply.message, toolResults: [resultA, resultB] },
        { type: "turn_start" },
        ...announce(steer),
        ...done.events,
        { type: "turn_end", message: done.message, toolResults: [] },
        { type: "agent_end", messages: [prompt, reply.message, resultA, resultB, steer, done.message], reason: "idle", usage: emptyUsage() },
      ];
      m.expect(run$).toBeObservable(...timeline({ ...openingFrames, 40: atSteering }));
      m.expect(colds.a).toHaveSubscriptions("^ 39ms !");
      m.expect(colds.b).toHaveSubscriptions("^ 29ms !");
      m.flush();
      expect(signals.a!.aborted).toBe(true);
      expect(model.calls[1]!.messages).toStrictEqual([prompt, reply.message, resultA, resultB, steer]);
      expectOneResultPerToolCall([...opening, ...atSteering]);
    }),
  );

  it(
    "abort mid-batch: the running call gets an error result, every call has one, then turn_end and agent_end",
    marbles((m) => {
      const controller = new AbortController();
      m.scheduler.schedule(() => controller.abort(), 40);
      const { colds, signals, model, calls, reply, run$, opening, openingFrames, failedEnd } = setup(m, { signal: controller.signal });
      const aborted = "Tool execution was aborted.";
      const resultA = toolResultMessage(calls.a, aborted, { isError: true, timestamp: 40 });
      const resultB = toolResultMessage(calls.b, "B", { timestamp: 30 });
      const atAbort: AgentEvent[] = [
        failedEnd("a", aborted),
        ...announce(resultA),
        ...announce(resultB),
        { type: "turn_end", message: reply.message, toolResults: [resultA, resultB] },
        { type: "agent_end", messages: [prompt, reply.message, resultA, resultB], reason: "aborted", usage: emptyUsage() },
      ];
      m.expect(run$).toBeObservable(...timeline({ ...openingFrames, 40: atAbort }));
      m.expect(colds.a).toHaveSubscriptions("^ 39ms !");
      m.flush();
      expect(signals.a!.aborted).toBe(true);
      expect(model.calls).toHaveLength(1);
      expectOneResultPerToolCall([...opening, ...atAbort]);
    }),
  );

  it(
    "unsubscribe mid-batch: every running call is torn down at that frame, nothing more is emitted",
    marbles((m) => {
      const { colds, signals, run$, opening, openingFrames } = setup(m);
      m.expect(run$, "^ 39ms !").toBeObservable(...timeline(openingFrames, "open"));
      m.expect(colds.a).toHaveSubscriptions("^ 39ms !");
      m.expect(colds.b).toHaveSubscriptions("^ 29ms !");
      m.flush();
      expect(signals.a!.aborted).toBe(true);
      // b finished at 30 and shares a's signal (started together, one deadline: call-signal-group.ts).
      expect(signals.b).toBe(signals.a);
      expectOneResultPerToolCall(opening, { complete: false });
    }),
  );

  it(
    "without steeringInterruptsTools, steering pushed during the batch waits for it and opens the next turn",
    marbles((m) => {
      const steer = userMessage("Also", 40);
      const { model, calls, reply, run$, openingFrames } = setup(m, { steering: m.hot<AgentMessage>("40ms s", { s: steer }) });
      const resultA = toolResultMessage(calls.a, "A", { timestamp: 50 });
      const resultB = toolResultMessage(calls.b, "B", { timestamp: 30 });
      const done = streamedReply([{ type: "text", words: ["Done"] }], { timestamp: 50 });
      // At 50 call a ends; the steering that came at 40 opens the next turn.
      const atEndOfA: AgentEvent[] = [
        { type: "tool_execution_end", toolCallId: "a", toolName: "work", result: textResult("A"), isError: false },
        ...announce(resultA),
        ...announce(resultB),
        { type: "turn_end", message: reply.message, toolResults: [resultA, resultB] },
        { type: "turn_start" },
        ...announce(steer),
        ...done.events,
        { type: "turn_end", message: done.message, toolResults: [] },
        { type: "agent_end", messages: [prompt, reply.message, resultA, resultB, steer, done.message], reason: "idle", usage: emptyUsage() },
      ];
      m.expect(run$).toBeObservable(...timeline({ ...openingFrames, 50: atEndOfA }));
      m.flush();
      expect(model.calls[1]!.messages.at(-1)).toBe(steer);
    }),
  );
});
