import { Type } from "@sinclair/typebox";
import { map, type Observable } from "rxjs";
import type { Context } from "rxjs-marbles";
import { describe, expect, it } from "vitest";
import { executeToolCalls } from "../../../src/operators/tool-calls/execute-tool-calls.js";
import { ToolBatchSummary, type ToolCallArrival } from "../../../src/operators/tool-calls/tool-batch.js";
import { fromAbortSignal } from "../../../src/streams/from-abort-signal.js";
import { LazyAbortController } from "../../../src/util/lazy-abort-controller.js";
import { MessageQueue } from "../../../src/streams/message-queue.js";
import { scriptedModel } from "../../../src/testing/scripted-model.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { errorResult, textResult } from "../../../src/tools/tool-results.js";
import type { AgentEvent, AgentLoopConfig, AgentTool, AgentToolResult, ToolCall, ToolResultMessage } from "../../../src/types.js";
import { marbles } from "../../helpers/marbles.js";
import { timeline } from "../../helpers/timeline.js";
import { announce, assistantMessage, lettered, toolCall, toolResultMessage, userMessage } from "../../testing/fixtures.js";

type BatchOutput = AgentEvent | ToolBatchSummary;

const results: Record<string, AgentToolResult> = { a: textResult("A"), b: textResult("B"), c: textResult("C") };

/**
 * Three calls (ids a, b, c) whose bodies are cold marble Observables, by default:
 *   a: 30ms (a|)    b: 10ms (b|)    c: 40ms (c|)
 * Each value completes its Observable in the same frame, so it is the result, never progress.
 * Tools are built from `body(id)`; the default is one tool "work" for all three.
 */
function setup(
  m: Context,
  options: {
    config?: Partial<AgentLoopConfig>;
    bodies?: Record<string, string>;
    tools?: (body: (id: string, signal: AbortSignal) => Observable<AgentToolResult>) => AgentTool[];
    calls?: ToolCall[];
    /** Eager execution: a hot marble of call ids; the batch starts empty and each id's call arrives at its frame. */
    arrivals?: string;
  } = {},
) {
  const bodies = options.bodies ?? { a: "30ms (a|)", b: "10ms (b|)", c: "40ms (c|)" };
  const colds = Object.fromEntries(Object.entries(bodies).map(([id, marble]) => [id, m.cold<AgentToolResult>(marble, results)]));
  const signals: Record<string, AbortSignal> = {};
  const body = (id: string, signal: AbortSignal) => {
    signals[id] = signal;
    return colds[id]!;
  };
  const tools = options.tools?.(body) ?? [
    defineTool({
      name: "work",
      description: "Works for a while",
      parameters: Type.Object({}),
      execute: (id, _args, { signal }) => body(id, signal),
    }),
  ];
  const calls = options.calls ?? [toolCall("a", "work"), toolCall("b", "work"), toolCall("c", "work")];
  const controller = new AbortController();
  const steering = new MessageQueue();
  const message = assistantMessage(calls);
  const arrivals = options.arrivals === undefined
    ? undefined
    : m.hot(options.arrivals).pipe(map((id): ToolCallArrival => ({ message, toolCalls: calls.filter((call) => call.id === id) })));
  const batch$ = executeToolCalls(message, arrivals ? [] : calls, {
    context: { messages: [], tools },
    config: { model: scriptedModel([]), ...options.config },
    scheduler: m.scheduler,
    cancellation: { get aborted() { return controller.signal.aborted; }, signal: controller.signal },
    abort$: fromAbortSignal(controller.signal),
    steering,
  }, arrivals);
  const callOf = (id: string) => calls.find((call) => call.id === id)!;
  const events = {
    start: (id: string): AgentEvent => ({ type: "tool_execution_start", toolCallId: id, toolName: callOf(id).name, args: callOf(id).arguments }),
    waitStart: (id: string, since: number): AgentEvent => ({ type: "tool_slot_wait_start", toolCallId: id, toolName: callOf(id).name, since }),
    waitEnd: (id: string): AgentEvent => ({ type: "tool_slot_wait_end", toolCallId: id, toolName: callOf(id).name }),
    end: (id: string, result: AgentToolResult = results[id]!, isError = false): AgentEvent => ({
      type: "tool_execution_end",
      toolCallId: id,
      toolName: callOf(id).name,
      result,
      isError,
    }),
    result: (id: string, timestamp: number, error?: string): ToolResultMessage =>
      error === undefined
        ? toolResultMessage(callOf(id), id.toUpperCase(), { timestamp })
        : toolResultMessage(callOf(id), error, { timestamp, isError: true }),
  };
  return { colds, signals, controller, steering, batch$, events };
}

describe("executeToolCalls", () => {
  describe("calls that arrive while their message streams (eager execution; a 30, b 10, c 40)", () => {
    //   arrivals: a at 0, b at 6, c at 21, complete at 31
    //   a: ^ 29ms !      b: 6ms ^ 9ms !      c: 21ms ^ 39ms !
    it(
      "each call starts as it arrives; results in call order; the batch ends once arrivals complete and every call is done",
      marbles((m) => {
        const { colds, batch$, events: e } = setup(m, { arrivals: "a 5ms b 14ms c 9ms |" });
        const [ra, rb, rc] = [e.result("a", 30), e.result("b", 16), e.result("c", 61)];
        m.expect(batch$).toBeObservable(
          ...timeline<BatchOutput>({
            0: [e.start("a")],
            6: [e.start("b")],
            16: [e.end("b")],
            21: [e.start("c")],
            30: [e.end("a"), ...announce(ra), ...announce(rb)],
            61: [e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false)],
          }),
        );
        m.expect(colds.a!).toHaveSubscriptions("^ 29ms !");
        m.expect(colds.b!).toHaveSubscriptions("6ms ^ 9ms !");
        m.expect(colds.c!).toHaveSubscriptions("21ms ^ 39ms !");
      }),
    );

    it(
      "maxConcurrency 1 holds for arriving calls: each waits for the slot of the one before",
      marbles((m) => {
        const { colds, batch$, events: e } = setup(m, { arrivals: "a 5ms b 14ms c 9ms |", config: { maxConcurrency: 1 } });
        const [ra, rb, rc] = [e.result("a", 30), e.result("b", 40), e.result("c", 80)];
        m.expect(batch$).toBeObservable(
          ...timeline<BatchOutput>({
            0: [e.start("a")],
            6: [e.start("b"), e.waitStart("b", 6)],
            21: [e.start("c"), e.waitStart("c", 21)],
            30: [e.end("a"), ...announce(ra), e.waitEnd("b")],
            40: [e.end("b"), ...announce(rb), e.waitEnd("c")],
            80: [e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false)],
          }),
        );
        m.expect(colds.a!).toHaveSubscriptions("^ 29ms !");
        m.expect(colds.b!).toHaveSubscriptions("30ms ^ 9ms !");
        m.expect(colds.c!).toHaveSubscriptions("40ms ^ 39ms !");
      }),
    );

    it(
      "a batch whose calls are all done waits for arrivals to complete",
      marbles((m) => {
        const { batch$, events: e } = setup(m, { arrivals: "a 49ms |", calls: [toolCall("a", "work")] });
        const ra = e.result("a", 30);
        m.expect(batch$).toBeObservable(
          ...timeline<BatchOutput>({ 0: [e.start("a")], 30: [e.end("a"), ...announce(ra)], 50: [new ToolBatchSummary([ra], false)] }),
        );
      }),
    );
  });

  describe("three tools of different latencies (a 30, b 10, c 40)", () => {
    it(
      "unbounded: all start at once; tool_execution_end as each finishes; results in call order as predecessors finish",
      marbles((m) => {
        const { colds, batch$, events: e } = setup(m);
        const [ra, rb, rc] = [e.result("a", 30), e.result("b", 10), e.result("c", 40)];
        const expected: BatchOutput[] = [
          e.start("a"), e.start("b"), e.start("c"),
          e.end("b"),
          e.end("a"), ...announce(ra), ...announce(rb),
          e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
        ];
        m.expect(batch$).toBeObservable("(abc) 5ms d 19ms (efghi) 3ms (jklm|)", lettered(expected));
        m.expect(colds.a!).toHaveSubscriptions("^ 29ms !");
        m.expect(colds.b!).toHaveSubscriptions("^ 9ms !");
        m.expect(colds.c!).toHaveSubscriptions("^ 39ms !");
      }),
    );

    it(
      "maxConcurrency 1: one after the other, each result as soon as its call ends",
      marbles((m) => {
        const { colds, batch$, events: e } = setup(m, { config: { maxConcurrency: 1 } });
        const [ra, rb, rc] = [e.result("a", 30), e.result("b", 40), e.result("c", 80)];
        // b and c wait for the one slot: they say so, and say when they get it.
        const expected = timeline<BatchOutput>({
          0: [e.start("a"), e.start("b"), e.waitStart("b", 0), e.start("c"), e.waitStart("c", 0)],
          30: [e.end("a"), ...announce(ra), e.waitEnd("b")],
          40: [e.end("b"), ...announce(rb), e.waitEnd("c")],
          80: [e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false)],
        });
        m.expect(batch$).toBeObservable(...expected);
        m.expect(colds.a!).toHaveSubscriptions("^ 29ms !");
        m.expect(colds.b!).toHaveSubscriptions("30ms ^ 9ms !");
        m.expect(colds.c!).toHaveSubscriptions("40ms ^ 39ms !");
      }),
    );

    it(
      "maxConcurrency 2: c starts when b frees a slot",
      marbles((m) => {
        const { colds, batch$, events: e } = setup(m, { config: { maxConcurrency: 2 } });
        const [ra, rb, rc] = [e.result("a", 30), e.result("b", 10), e.result("c", 50)];
        const expected = timeline<BatchOutput>({
          0: [e.start("a"), e.start("b"), e.start("c"), e.waitStart("c", 0)],
          10: [e.end("b"), e.waitEnd("c")],
          30: [e.end("a"), ...announce(ra), ...announce(rb)],
          50: [e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false)],
        });
        m.expect(batch$).toBeObservable(...expected);
        m.expect(colds.a!).toHaveSubscriptions("^ 29ms !");
        m.expect(colds.b!).toHaveSubscriptions("^ 9ms !");
        m.expect(colds.c!).toHaveSubscriptions("10ms ^ 39ms !");
      }),
    );
  });

  describe("sequential execution", () => {
    const sequentialMarble = "a 29ms (bcde) 4ms (fghi) 34ms (jklm|)";
    const sequentialEvents = (e: ReturnType<typeof setup>["events"]): BatchOutput[] => {
      const [ra, rb, rc] = [e.result("a", 30), e.result("b", 40), e.result("c", 80)];
      return [
        e.start("a"),
        e.end("a"), ...announce(ra), e.start("b"),
        e.end("b"), ...announce(rb), e.start("c"),
        e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false),
      ];
    };

    it(
      'toolExecution "sequential" prepares and runs each call to its end before the next',
      marbles((m) => {
        const { colds, batch$, events: e } = setup(m, { config: { toolExecution: "sequential" } });
        m.expect(batch$).toBeObservable(sequentialMarble, lettered(sequentialEvents(e)));
        m.expect(colds.a!).toHaveSubscriptions("^ 29ms !");
        m.expect(colds.b!).toHaveSubscriptions("30ms ^ 9ms !");
        m.expect(colds.c!).toHaveSubscriptions("40ms ^ 39ms !");
      }),
    );

    it(
      'one tool with executionMode "sequential" makes its whole batch sequential',
      marbles((m) => {
        const { colds, batch$, events: e } = setup(m, {
          calls: [toolCall("a", "work"), toolCall("b", "serial"), toolCall("c", "work")],
          tools: (body) => [
            defineTool({ name: "work", description: "w", parameters: Type.Object({}), execute: (id, _args, { signal }) => body(id, signal) }),
            defineTool({
              name: "serial",
              description: "s",
              parameters: Type.Object({}),
              executionMode: "sequential",
              execute: (id, _args, { signal }) => body(id, signal),
            }),
          ],
        });
        m.expect(batch$).toBeObservable(sequentialMarble, lettered(sequentialEvents(e)));
        m.expect(colds.b!).toHaveSubscriptions("30ms ^ 9ms !");
        m.expect(colds.c!).toHaveSubscriptions("40ms ^ 39ms !");
      }),
    );
  });

  it(
    "a tool's concurrency caps its own calls while other tools run freely",
    marbles((m) => {
      const { colds, batch$, events: e } = setup(m, {
        bodies: { a: "30ms (a|)", b: "10ms (b|)", c: "50ms (c|)" },
        calls: [toolCall("a", "capped"), toolCall("b", "capped"), toolCall("c", "free")],
        tools: (body) => [
          defineTool({ name: "capped", description: "c", parameters: Type.Object({}), concurrency: 1, execute: (id, _args, { signal }) => body(id, signal) }),
          defineTool({ name: "free", description: "f", parameters: Type.Object({}), execute: (id, _args, { signal }) => body(id, signal) }),
        ],
      });
      const [ra, rb, rc] = [e.result("a", 30), e.result("b", 40), e.result("c", 50)];
      const expected = timeline<BatchOutput>({
        0: [e.start("a"), e.start("b"), e.waitStart("b", 0), e.start("c")],
        30: [e.end("a"), ...announce(ra), e.waitEnd("b")],
        40: [e.end("b"), ...announce(rb)],
        50: [e.end("c"), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false)],
      });
      m.expect(batch$).toBeObservable(...expected);
      m.expect(colds.a!).toHaveSubscriptions("^ 29ms !");
      m.expect(colds.b!).toHaveSubscriptions("30ms ^ 9ms !");
      m.expect(colds.c!).toHaveSubscriptions("^ 49ms !");
    }),
  );

  it(
    "a per-tool cap and maxConcurrency together: a call waiting for its tool does not hold a global slot",
    marbles((m) => {
      const { colds, batch$, events: e } = setup(m, {
        config: { maxConcurrency: 2 },
        bodies: { a: "30ms (a|)", b: "10ms (b|)", c: "20ms (c|)" },
        calls: [toolCall("a", "capped"), toolCall("b", "capped"), toolCall("c", "free")],
        tools: (body) => [
          defineTool({ name: "capped", description: "c", parameters: Type.Object({}), concurrency: 1, execute: (id, _args, { signal }) => body(id, signal) }),
          defineTool({ name: "free", description: "f", parameters: Type.Object({}), execute: (id, _args, { signal }) => body(id, signal) }),
        ],
      });
      const [ra, rb, rc] = [e.result("a", 30), e.result("b", 40), e.result("c", 20)];
      const expected = timeline<BatchOutput>({
        0: [e.start("a"), e.start("b"), e.waitStart("b", 0), e.start("c")],
        20: [e.end("c")],
        30: [e.end("a"), ...announce(ra), e.waitEnd("b")],
        40: [e.end("b"), ...announce(rb), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false)],
      });
      m.expect(batch$).toBeObservable(...expected);
      m.expect(colds.a!).toHaveSubscriptions("^ 29ms !");
      m.expect(colds.b!).toHaveSubscriptions("30ms ^ 9ms !");
      m.expect(colds.c!).toHaveSubscriptions("^ 19ms !");
    }),
  );

  describe("signals: calls that can only be stopped together share one (call-signal-group.ts)", () => {
    const timeoutText = 'Tool "slow" timed out after 15 ms';
    const slowTool = (body: (id: string, signal: AbortSignal) => Observable<AgentToolResult>) =>
      defineTool({ name: "slow", description: "s", parameters: Type.Object({}), timeoutMs: 15, execute: (id, _args, { signal }) => body(id, signal) });

    it(
      "calls of one tool started together with one deadline: at the deadline every one still running times out, and the shared signal fires",
      marbles((m) => {
        const calls = [toolCall("a", "slow"), toolCall("b", "slow"), toolCall("c", "slow")];
        const { colds, signals, batch$, events: e } = setup(m, { calls, tools: (body) => [slowTool(body)] });
        const [ra, rb, rc] = [e.result("a", 15, timeoutText), e.result("b", 10), e.result("c", 15, timeoutText)];
        m.expect(batch$).toBeObservable(
          ...timeline<BatchOutput>({
            0: [e.start("a"), e.start("b"), e.start("c")],
            10: [e.end("b")],
            15: [e.end("a", errorResult(timeoutText), true), ...announce(ra), ...announce(rb), e.end("c", errorResult(timeoutText), true), ...announce(rc), new ToolBatchSummary([ra, rb, rc], false)],
          }),
        );
        m.expect(colds.a!).toHaveSubscriptions("^ 14ms !");
        m.expect(colds.b!).toHaveSubscriptions("^ 9ms !");
        m.expect(colds.c!).toHaveSubscriptions("^ 14ms !");
        m.flush();
        expect(signals.b).toBe(signals.a);
        expect(signals.c).toBe(signals.a);
        expect(signals.a!.aborted).toBe(true);
        expect(String(signals.a!.reason)).toContain("timed out");
      }),
    );

    it(
      "a call stopped alone by its own deadline (its timeout argument) leaves the signal of a call still running unfired",
      marbles((m) => {
        const calls = [toolCall("a", "timed", { timeout: 0.1 }), toolCall("b", "timed", { timeout: 1 })];
        const { colds, signals, batch$, events: e } = setup(m, {
          calls,
          bodies: { a: "150ms (a|)", b: "120ms (b|)" },
          tools: (body) => [
            defineTool({ name: "timed", description: "t", parameters: Type.Object({ timeout: Type.Number() }), execute: (id, _args, { signal }) => body(id, signal) }),
          ],
        });
        const seen: boolean[] = [];
        m.scheduler.schedule(() => seen.push(signals.a!.aborted, signals.b!.aborted), 101);
        const message =
          'Tool "timed" timed out after 0.1 seconds. The tool call exceeded its time limit; re-issue it with a longer timeout ' +
          '(for example a "timeout" argument in seconds) or split the work into smaller steps.';
        const [ra, rb] = [e.result("a", 100, message), e.result("b", 120)];
        m.expect(batch$).toBeObservable(
          ...timeline<BatchOutput>({
            0: [e.start("a"), e.start("b")],
            100: [e.end("a", errorResult(message), true), ...announce(ra)],
            120: [e.end("b"), ...announce(rb), new ToolBatchSummary([ra, rb], false)],
          }),
        );
        m.expect(colds.a!).toHaveSubscriptions("^ 99ms !");
        m.expect(colds.b!).toHaveSubscriptions("^ 119ms !");
        m.flush();
        expect(seen).toStrictEqual([true, false]);
        expect(signals.a).not.toBe(signals.b);
        expect(signals.b!.aborted).toBe(false);
      }),
    );

    it(
      "calls of different tools get different signals: one timing out leaves the other's unfired",
      marbles((m) => {
        const calls = [toolCall("a", "slow"), toolCall("b", "work")];
        const { colds, signals, batch$, events: e } = setup(m, {
          calls,
          bodies: { a: "30ms (a|)", b: "20ms (b|)" },
          tools: (body) => [slowTool(body), defineTool({ name: "work", description: "w", parameters: Type.Object({}), execute: (id, _args, { signal }) => body(id, signal) })],
        });
        const seen: boolean[] = [];
        m.scheduler.schedule(() => seen.push(signals.a!.aborted, signals.b!.aborted), 16);
        const [ra, rb] = [e.result("a", 15, timeoutText), e.result("b", 20)];
        m.expect(batch$).toBeObservable(
          ...timeline<BatchOutput>({
            0: [e.start("a"), e.start("b")],
            15: [e.end("a", errorResult(timeoutText), true), ...announce(ra)],
            20: [e.end("b"), ...announce(rb), new ToolBatchSummary([ra, rb], false)],
          }),
        );
        m.expect(colds.a!).toHaveSubscriptions("^ 14ms !");
        m.expect(colds.b!).toHaveSubscriptions("^ 19ms !");
        m.flush();
        expect(seen).toStrictEqual([true, false]);
        expect(signals.b!.aborted).toBe(false);
      }),
    );

    it(
      "calls that arrive at different times (eager execution) have different deadlines: one timing out leaves the other's unfired",
      marbles((m) => {
        // a: ^ 29ms ! (times out at 30)      b: 10ms ^ 25ms ! (ends at 36, before its deadline, 40)      arrivals complete at 50
        const { colds, signals, batch$, events: e } = setup(m, {
          arrivals: "a 9ms b 39ms |",
          bodies: { a: "40ms (a|)", b: "26ms (b|)" },
          calls: [toolCall("a", "work"), toolCall("b", "work")],
          config: { toolTimeoutMs: 30 },
        });
        const seen: boolean[] = [];
        m.scheduler.schedule(() => seen.push(signals.a!.aborted, signals.b!.aborted), 31);
        const message =
          'Tool "work" timed out after 0 seconds. The tool call exceeded its time limit; re-issue it with a longer timeout ' +
          '(for example a "timeout" argument in seconds) or split the work into smaller steps.';
        const [ra, rb] = [e.result("a", 30, message), e.result("b", 36)];
        m.expect(batch$).toBeObservable(
          ...timeline<BatchOutput>({
            0: [e.start("a")],
            10: [e.start("b")],
            30: [e.end("a", errorResult(message), true), ...announce(ra)],
            36: [e.end("b"), ...announce(rb)],
            50: [new ToolBatchSummary([ra, rb], false)],
          }),
        );
        m.expect(colds.a!).toHaveSubscriptions("^ 29ms !");
        m.expect(colds.b!).toHaveSubscriptions("10ms ^ 25ms !");
        m.flush();
        expect(seen).toStrictEqual([true, false]);
        expect(signals.a).not.toBe(signals.b);
        expect(signals.b!.aborted).toBe(false);
      }),
    );

    it(
      "a signal read after the call started is the call's own",
      marbles((m) => {
        const signals: Record<string, AbortSignal> = {};
        const { batch$, events: e } = setup(m, {
          calls: [toolCall("a", "late"), toolCall("b", "late")],
          tools: () => [
            defineTool({
              name: "late",
              description: "l",
              parameters: Type.Object({}),
              execute: (id, _args, context) =>
                m.cold<AgentToolResult>("5ms (r|)", { r: textResult(id.toUpperCase()) }).pipe(
                  map((result) => {
                    signals[id] = context.signal;
                    return result;
                  }),
                ),
            }),
          ],
        });
        const [ra, rb] = [e.result("a", 5), e.result("b", 5)];
        m.expect(batch$).toBeObservable(
          ...timeline<BatchOutput>({ 0: [e.start("a"), e.start("b")], 5: [e.end("a"), ...announce(ra), e.end("b"), ...announce(rb), new ToolBatchSummary([ra, rb], false)] }),
        );
        m.flush();
        expect(signals.a).not.toBe(signals.b);
        expect([signals.a!.aborted, signals.b!.aborted]).toStrictEqual([false, false]);
      }),
    );

    // In virtual time: on a real clock, calls that straddle a millisecond get different deadlines,
    // so different groups (correct, only less sharing), and the assertion would depend on timing.
    it(
      "calls answering at once that read their signal share one, which never fires",
      marbles((m) => {
        const signals: AbortSignal[] = [];
        const tool = defineTool({
          name: "instant",
          description: "i",
          parameters: Type.Object({}),
          execute: (id, _args, { signal }) => {
            signals.push(signal);
            return textResult(id);
          },
        });
        const calls = [toolCall("a", "instant"), toolCall("b", "instant"), toolCall("c", "instant")];
        const outputs: BatchOutput[] = [];
        executeToolCalls(assistantMessage(calls), calls, {
          context: { messages: [], tools: [tool] },
          config: { model: scriptedModel([]) },
          scheduler: m.scheduler,
          cancellation: new LazyAbortController(),
          abort$: fromAbortSignal(undefined),
          steering: new MessageQueue(),
        }).subscribe((output) => outputs.push(output));
        expect(outputs.at(-1)).toBeInstanceOf(ToolBatchSummary);
        expect(signals).toHaveLength(3);
        expect(new Set(signals).size).toBe(1);
        expect(signals[0]!.aborted).toBe(false);
      }),
    );
  });

  it(
    "times a call out after timeoutMs: its signal fires and its result says it timed out",
    marbles((m) => {
      const { colds, signals, batch$, events: e } = setup(m, {
        bodies: { a: "30ms (a|)" },
        calls: [toolCall("a", "slow")],
        tools: (body) => [
          defineTool({ name: "slow", description: "s", parameters: Type.Object({}), timeoutMs: 15, execute: (id, _args, { signal }) => body(id, signal) }),
        ],
      });
      const message = 'Tool "slow" timed out after 15 ms';
      const ra = e.result("a", 15, message);
      const expected: BatchOutput[] = [e.start("a"), e.end("a", errorResult(message), true), ...announce(ra), new ToolBatchSummary([ra], false)];
      m.expect(batch$).toBeObservable("a 14ms (bcde|)", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions("^ 14ms !");
      m.flush();
      expect(signals.a!.aborted).toBe(true);
      expect(String(signals.a!.reason)).toContain("timed out");
    }),
  );

  it(
    "steeringInterruptsTools: steering aborts the running call and skips the rest, each with an error result",
    marbles((m) => {
      const skipped = "Skipped due to queued user message.";
      const { colds, signals, steering, batch$, events: e } = setup(m, { config: { maxConcurrency: 1, steeringInterruptsTools: true } });
      m.scheduler.schedule(() => steering.push(userMessage("stop that")), 15);
      const [ra, rb, rc] = [e.result("a", 15, skipped), e.result("b", 15, skipped), e.result("c", 15, skipped)];
      // The waiting calls get their slots as the interrupted ones end, and are skipped at once.
      const expected = timeline<BatchOutput>({
        0: [e.start("a"), e.start("b"), e.waitStart("b", 0), e.start("c"), e.waitStart("c", 0)],
        15: [
          e.end("a", errorResult(skipped), true), ...announce(ra),
          e.waitEnd("b"), e.end("b", errorResult(skipped), true), ...announce(rb),
          e.waitEnd("c"), e.end("c", errorResult(skipped), true), ...announce(rc),
          new ToolBatchSummary([ra, rb, rc], false),
        ],
      });
      m.expect(batch$).toBeObservable(...expected);
      m.expect(colds.a!).toHaveSubscriptions("^ 14ms !");
      m.expect(colds.b!).toHaveSubscriptions([]);
      m.expect(colds.c!).toHaveSubscriptions([]);
      m.flush();
      expect(signals.a!.aborted).toBe(true);
      expect(steering.size).toBe(1);
    }),
  );

  it(
    "without steeringInterruptsTools, steering waits for the batch",
    marbles((m) => {
      const { steering, batch$, events: e } = setup(m);
      m.scheduler.schedule(() => steering.push(userMessage("later")), 15);
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

  it(
    "abort mid-batch: running calls are torn down, every call gets an error result",
    marbles((m) => {
      const aborted = "Tool execution was aborted.";
      const { colds, signals, controller, batch$, events: e } = setup(m);
      m.scheduler.schedule(() => controller.abort(), 15);
      const [ra, rb, rc] = [e.result("a", 15, aborted), e.result("b", 10), e.result("c", 15, aborted)];
      const expected: BatchOutput[] = [
        e.start("a"), e.start("b"), e.start("c"),
        e.end("b"),
        e.end("a", errorResult(aborted), true), ...announce(ra), ...announce(rb),
        e.end("c", errorResult(aborted), true), ...announce(rc),
        new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abc) 5ms d 4ms (efghijklm|)", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions("^ 14ms !");
      m.expect(colds.b!).toHaveSubscriptions("^ 9ms !");
      m.expect(colds.c!).toHaveSubscriptions("^ 14ms !");
      m.flush();
      // The three calls started together with one deadline: they share one signal (call-signal-group.ts),
      // which b, finished at 10, keeps.
      expect(signals.a).toBe(signals.b);
      expect(signals.c).toBe(signals.b);
      expect([signals.a!.aborted, signals.b!.aborted, signals.c!.aborted]).toStrictEqual([true, true, true]);
    }),
  );

  it(
    "abort mid-batch with a cancellations source: each call has its own signal, and b's, finished at 10, does not fire",
    marbles((m) => {
      const aborted = "Tool execution was aborted.";
      const { colds, signals, controller, batch$, events: e } = setup(m, { config: { cancellations: m.hot("") } });
      m.scheduler.schedule(() => controller.abort(), 15);
      const [ra, rb, rc] = [e.result("a", 15, aborted), e.result("b", 10), e.result("c", 15, aborted)];
      const expected: BatchOutput[] = [
        e.start("a"), e.start("b"), e.start("c"),
        e.end("b"),
        e.end("a", errorResult(aborted), true), ...announce(ra), ...announce(rb),
        e.end("c", errorResult(aborted), true), ...announce(rc),
        new ToolBatchSummary([ra, rb, rc], false),
      ];
      m.expect(batch$).toBeObservable("(abc) 5ms d 4ms (efghijklm|)", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions("^ 14ms !");
      m.expect(colds.b!).toHaveSubscriptions("^ 9ms !");
      m.expect(colds.c!).toHaveSubscriptions("^ 14ms !");
      m.flush();
      expect(new Set([signals.a, signals.b, signals.c]).size).toBe(3);
      expect([signals.a!.aborted, signals.b!.aborted, signals.c!.aborted]).toStrictEqual([true, false, true]);
    }),
  );

  it(
    "unsubscribe mid-batch: every running call is torn down and nothing more is emitted",
    marbles((m) => {
      const { colds, signals, batch$, events: e } = setup(m);
      const expected: BatchOutput[] = [e.start("a"), e.start("b"), e.start("c"), e.end("b")];
      m.expect(batch$, "^ 14ms !").toBeObservable("(abc) 5ms d", lettered(expected));
      m.expect(colds.a!).toHaveSubscriptions("^ 14ms !");
      m.expect(colds.b!).toHaveSubscriptions("^ 9ms !");
      m.expect(colds.c!).toHaveSubscriptions("^ 14ms !");
      m.flush();
      // One shared signal (started together, one deadline): it fires as a and c are torn down.
      expect([signals.a!.aborted, signals.b!.aborted, signals.c!.aborted]).toStrictEqual([true, true, true]);
    }),
  );

  it(
    "terminate: the summary says stop only when every result asks to",
    marbles((m) => {
      for (const [terminates, expected] of [
        [[true, true], true],
        [[true, false], false],
      ] as const) {
        const calls = [toolCall("x", "finish"), toolCall("y", "finish")];
        const finish = defineTool({
          name: "finish",
          description: "f",
          parameters: Type.Object({}),
          execute: (id) => ({ ...textResult(id), terminate: terminates[id === "x" ? 0 : 1] }),
        });
        const outputs: BatchOutput[] = [];
        executeToolCalls(assistantMessage(calls), calls, {
          context: { messages: [], tools: [finish] },
          config: { model: scriptedModel([]) },
          scheduler: m.scheduler,
          cancellation: new LazyAbortController(),
          abort$: fromAbortSignal(undefined),
          steering: new MessageQueue(),
        }).subscribe((output) => outputs.push(output));
        const summary = outputs.at(-1) as ToolBatchSummary;
        expect(summary).toBeInstanceOf(ToolBatchSummary);
        expect(summary.terminate).toBe(expected);
        expect(summary.results.map((result) => result.toolCallId)).toStrictEqual(["x", "y"]);
      }
    }),
  );
});
