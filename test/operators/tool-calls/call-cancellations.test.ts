import { Type } from "@sinclair/typebox";
import { Observable } from "rxjs";
import type { Context } from "rxjs-marbles";
import { describe, expect, it } from "vitest";
import { executeToolCalls } from "../../../src/operators/tool-calls/execute-tool-calls.js";
import { ToolBatchSummary } from "../../../src/operators/tool-calls/tool-batch.js";
import { fromAbortSignal } from "../../../src/streams/from-abort-signal.js";
import { MessageQueue } from "../../../src/streams/message-queue.js";
import { scriptedModel } from "../../../src/testing/scripted-model.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { errorResult, textResult } from "../../../src/tools/tool-results.js";
import type { AgentEvent, AgentLoopConfig, AgentTool, AgentToolResult, ToolCall, ToolCallCancellation, ToolResultMessage } from "../../../src/types.js";
import { marbles } from "../../helpers/marbles.js";
import { timeline } from "../../helpers/timeline.js";
import { announce, assistantMessage, lettered, toolCall, toolResultMessage } from "../../testing/fixtures.js";

type BatchOutput = AgentEvent | ToolBatchSummary;

const results: Record<string, AgentToolResult> = { a: textResult("A"), b: textResult("B"), c: textResult("C") };

/**
 * Three calls (ids a, b, c) of one tool "work" whose bodies are cold marble Observables:
 *   a: 30ms (a|)    b: 10ms (b|)    c: 40ms (c|)
 * and a hot source of cancellations given as a marble.
 */
function setup(
  m: Context,
  cancels: string,
  cancelValues: Record<string, ToolCallCancellation | null>,
  options: { config?: Partial<AgentLoopConfig>; tools?: (body: (id: string, signal: AbortSignal) => Observable<AgentToolResult>) => AgentTool[] } = {},
) {
  const colds = {
    a: m.cold<AgentToolResult>("30ms (a|)", results),
    b: m.cold<AgentToolResult>("10ms (b|)", results),
    c: m.cold<AgentToolResult>("40ms (c|)", results),
  } as Record<string, Observable<AgentToolResult>>;
  const signals: Record<string, AbortSignal> = {};
  const body = (id: string, signal: AbortSignal) => {
    signals[id] = signal;
    return colds[id]!;
  };
  const tools = options.tools?.(body) ?? [
    defineTool({ name: "work", description: "Works for a while", parameters: Type.Object({}), execute: (id, _args, { signal }) => body(id, signal) }),
  ];
  const calls: ToolCall[] = [toolCall("a", "work"), toolCall("b", "work"), toolCall("c", "work")];
  const cancellations = m.hot(cancels, cancelValues as Record<string, ToolCallCancellation>);
  const controller = new AbortController();
  const batch$ = executeToolCalls(assistantMessage(calls), calls, {
    context: { messages: [], tools },
    config: { model: scriptedModel([]), cancellations, ...options.config },
    scheduler: m.scheduler,
    cancellation: { get aborted() { return controller.signal.aborted; }, signal: controller.signal },
    abort$: fromAbortSignal(controller.signal),
    steering: new MessageQueue(),
  });
  const callOf = (id: string) => calls.find((call) => call.id === id)!;
  const events = {
    start: (id: string): AgentEvent => ({ type: "tool_execution_start", toolCallId: id, toolName: "work", args: {} }),
    waitStart: (id: string, since: number): AgentEvent => ({ type: "tool_slot_wait_start", toolCallId: id, toolName: "work", since }),
    waitEnd: (id: string): AgentEvent => ({ type: "tool_slot_wait_end", toolCallId: id, toolName: "work" }),
    end: (id: string, result: AgentToolResult = results[id]!, isError = false): AgentEvent => ({
      type: "tool_execution_end",
      toolCallId: id,
      toolName: "work",
      result,
      isError,
    }),
    result: (id: string, timestamp: number, error?: string): ToolResultMessage =>
      error === undefined
        ? toolResultMessage(callOf(id), id.toUpperCase(), { timestamp })
        : toolResultMessage(callOf(id), error, { timestamp, isError: true }),
  };
  return { colds, signals, cancellations, batch$, events };
}

const tooSlow = "Tool call was cancelled: too slow";

describe("cancelling one tool call (config.cancellations)", () => {
  it(
    "a cancel in the middle of a batch stops that call only: its signal fires, its result says why, the others go on",
    marbles((m) => {
      //  a: 30ms (a|)  cancelled at 15
      //  b: 10ms (b|)
      //  c: 40ms (c|)
      const { colds, signals, cancellations, batch$, events: e } = setup(m, "15ms x", { x: { toolCallId: "a", reason: "too slow" } });
      const [ra, rb, rc] = [e.result("a", 15, tooSlow), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.start("b"), e.start("c"),
        e.end("b"),
        e.end("a", errorResult(tooSlow), true), ...announce(ra), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abc) 5ms d 4ms (efghi) 18ms (jklm|)", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions("^ 14ms !");
      m.expect(colds.b!).toHaveSubscriptions("^ 9ms !");
      m.expect(colds.c!).toHaveSubscriptions("^ 39ms !");
      // One subscription for the whole batch, not one per call.
      m.expect(cancellations).toHaveSubscriptions("^ 39ms !");
      m.flush();
      expect([signals.a!.aborted, signals.b!.aborted, signals.c!.aborted]).toStrictEqual([true, false, false]);
      expect(String(signals.a!.reason)).toBe(`Error: ${tooSlow}`);
    }),
  );

  it(
    "a call waiting for a concurrency slot is settled at the cancel and never runs; its result keeps its place",
    marbles((m) => {
      const { colds, batch$, events: e } = setup(m, "10ms x", { x: { toolCallId: "b" } }, { config: { maxConcurrency: 1 } });
      const cancelled = "Tool call was cancelled.";
      const [ra, rb, rc] = [e.result("a", 30), e.result("b", 10, cancelled), e.result("c", 70)];
      // b's tool_execution_end ends its wait for a slot: no tool_slot_wait_end for it.
      const expected = timeline<BatchOutput>({
        0: [e.start("a"), e.start("b"), e.waitStart("b", 0), e.start("c"), e.waitStart("c", 0)],
        10: [e.end("b", errorResult(cancelled), true)],
        30: [e.end("a"), ...announce(ra), ...announce(rb), e.waitEnd("c")],
        70: [e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false)],
      });
      m.expect(batch$).toBeObservable(...expected);
      m.expect(colds.b!).toHaveSubscriptions([]);
      m.expect(colds.c!).toHaveSubscriptions("30ms ^ 39ms !");
    }),
  );

  it(
    "in a sequential batch, a call cancelled before it is announced is settled as it comes up, without running",
    marbles((m) => {
      const { colds, batch$, events: e } = setup(m, "5ms x", { x: { toolCallId: "b", reason: "no" } }, { config: { toolExecution: "sequential" } });
      const cancelled = "Tool call was cancelled: no";
      const [ra, rb, rc] = [e.result("a", 30), e.result("b", 30, cancelled), e.result("c", 70)];
      const expected: BatchOutput[] = [
        e.start("a"),
        e.end("a"), ...announce(ra),
        e.start("b"), e.end("b", errorResult(cancelled), true), ...announce(rb),
        e.start("c"),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("a 29ms (bcdefghi) 30ms (jklm|)", lettered(expected));
      m.expect(colds.b!).toHaveSubscriptions([]);
    }),
  );

  it(
    "a call waiting for beforeToolCall is settled at the cancel; the hook's later answer is moot and the next calls are prepared",
    marbles((m) => {
      const hook = m.cold<undefined>("50ms (u|)", { u: undefined });
      const { colds, batch$, events: e } = setup(m, "10ms x", { x: { toolCallId: "a", reason: "too slow" } }, {
        config: { beforeToolCall: ({ toolCall }) => (toolCall.id === "a" ? hook : undefined) },
      });
      const [ra, rb, rc] = [e.result("a", 10, tooSlow), e.result("b", 20), e.result("c", 50)];
      const expected: BatchOutput[] = [
        e.start("a"),
        e.end("a", errorResult(tooSlow), true), ...announce(ra), e.start("b"), e.start("c"),
        e.end("b"), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("a 9ms (bcdef) 3ms (ghi) 25ms (jklm|)", lettered(expected));
      m.expect(hook).toHaveSubscriptions("^ 9ms !");
      m.expect(colds.a!).toHaveSubscriptions([]);
    }),
  );

  it(
    "a tool that ends gracefully as its signal fires keeps its own result",
    marbles((m) => {
      const partial = textResult("partial: 3 of 10 pages");
      const { batch$, events: e } = setup(m, "15ms x", { x: { toolCallId: "a" } }, {
        tools: (body) => [
          defineTool({
            name: "work",
            description: "Stops early on its signal with what it has",
            parameters: Type.Object({}),
            execute: (id, _args, { signal }) =>
              id !== "a"
                ? body(id, signal)
                : new Observable<AgentToolResult>((subscriber) => {
                    signal.addEventListener("abort", () => {
                      subscriber.next(partial);
                      subscriber.complete();
                    });
                  }),
          }),
        ],
      });
      const ra = toolResultMessage(toolCall("a", "work"), "partial: 3 of 10 pages", { timestamp: 15 });
      const [rb, rc] = [e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.start("b"), e.start("c"),
        e.end("b"),
        e.end("a", partial), ...announce(ra), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abc) 5ms d 4ms (efghi) 18ms (jklm|)", lettered(expected));
    }),
  );

  it(
    "cancels for an unknown id, a finished call, a call twice, or that are not cancels at all change nothing else",
    marbles((m) => {
      const { batch$, events: e } = setup(m, "(uv) 8ms w 2ms (xy)", {
        u: { toolCallId: "nope" },
        v: null,
        w: { toolCallId: "b" },
        x: { toolCallId: "a", reason: "too slow" },
        y: { toolCallId: "a", reason: "again" },
      });
      const [ra, rb, rc] = [e.result("a", 15, tooSlow), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.start("b"), e.start("c"),
        e.end("b"),
        e.end("a", errorResult(tooSlow), true), ...announce(ra), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abc) 5ms d 4ms (efghi) 18ms (jklm|)", lettered(expected));
    }),
  );

  it(
    "a cancellations source that errors only stops bringing cancels",
    marbles((m) => {
      const { batch$, events: e } = setup(m, "5ms #", {});
      const [ra, rb, rc] = [e.result("a", 30), e.result("b", 10), e.result("c", 40)];
      const expected: BatchOutput[] = [
        e.start("a"), e.start("b"), e.start("c"),
        e.end("b"),
        e.end("a"), ...announce(ra), ...announce(rb),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abc) 5ms d 19ms (efghi) 3ms (jklm|)", lettered(expected));
    }),
  );
});
