/**
 * Shrunk counterexamples the property tests found, kept as plain example tests. Each failed
 * before its fix.
 */
import { emptyUsage } from "../../src/types/messages.js";
import { Type } from "@sinclair/typebox";
import { map, Subject, takeWhile, timer } from "rxjs";
import { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { checkEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentEventType, AgentLoopConfig, AgentMessage, Model } from "../../src/types.js";
import { allProblems } from "./invariants.js";
import { runScenario } from "./run-scenario.js";
import type { Scenario } from "./scenario.js";

/** A scripted model that hands out the signals it was called with. */
function recordingModel(scheduler: TestScheduler, turns: Parameters<typeof scriptedModel>[0]) {
  const scripted = scriptedModel(turns, { scheduler, delay: 1 });
  const signals: AbortSignal[] = [];
  const model: Model = {
    id: scripted.id,
    provider: scripted.provider,
    api: scripted.api,
    stream: (context, options) => {
      signals.push(options.signal);
      return scripted.stream(context, options);
    },
  };
  return { model, signals };
}

const baseScenario: Scenario = {
  turns: [{ calls: [], failure: "none" }],
  modelDelay: 1,
  maxConcurrency: undefined,
  toolExecution: "parallel",
  steeringMode: "one-at-a-time",
  followUpMode: "one-at-a-time",
  steeringInterruptsTools: false,
  beforeToolCall: { kind: "absent" },
  blockEvery: 0,
  afterToolCall: { kind: "absent" },
  transformContext: { kind: "absent" },
  stopAfterTurns: undefined,
  steering: [],
  followUps: [],
  steeringOnEvents: [],
  followUpsOnEvents: [],
  stop: { kind: "none" },
};

describe("regressions found by the property tests", () => {
  // Found as: { turns: [{ calls: [] }], modelDelay: 1, afterToolCall: throw, stop: { abort at 0 } }.
  // Cause: streamAssistant aborted the model's signal only when the message had not ended, but on
  // abort toMessageEvents ends the message itself while the request is still open.
  it("fires the model's signal when an abort ends the message while the request is open", () => {
    const scheduler = new TestScheduler(() => undefined);
    scheduler.run(() => {
      const { model, signals } = recordingModel(scheduler, ["a reply of several words"]);
      const controller = new AbortController();
      const events: AgentEvent[] = [];
      agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [] }, { model, scheduler, signal: controller.signal }).subscribe(
        (event) => events.push(event),
      );
      scheduler.schedule(() => controller.abort(), 2);
      scheduler.flush();
      expect(checkEventGrammar(events)).toStrictEqual([]);
      expect(signals).toHaveLength(1);
      expect(signals[0]!.aborted).toBe(true);
    });
  });

  it("holds every invariant in the shrunk abort-at-0 scenario", () => {
    const scenario: Scenario = { ...baseScenario, afterToolCall: { kind: "throw", every: 1 }, stop: { kind: "abort", at: 0 } };
    expect(allProblems(scenario, runScenario(scenario))).toStrictEqual([]);
  });

  // Found by every-index.test.ts as: abort from inside the observer as `tool_execution_end` (or
  // the tool's `tool_execution_update`) of an asynchronous tool is emitted. The run hung: no
  // result message, no turn_end, no agent_end, never completes.
  // Cause: executeToolCalls added the batch's subscription to the subscription of its
  // interruption trigger, a `take(1)` that closes itself when the abort fires; re-entrantly, the
  // batch was still mid-emission and was torn down with it.
  it.each<AgentEventType>(["tool_execution_update", "tool_execution_end"])(
    "ends the run when aborted re-entrantly as an async tool's %s is emitted",
    (stopAt) => {
      const events = runWithStop({ kind: "abort", at: stopAt });
      expect(checkEventGrammar(events)).toStrictEqual([]);
      expect(events.map((event) => event.type).slice(-5)).toStrictEqual(["tool_execution_end", "message_start", "message_end", "turn_end", "agent_end"]);
    },
  );

  // Found by every-index.test.ts as: abort from inside the observer as `turn_end` is emitted.
  // Cause: the turn built `concat(of(turn_end), decideNext(...))`, so decideNext looked at the
  // signal before turn_end was emitted, and a whole extra turn (with an aborted assistant message
  // and a drained steering message) followed the abort.
  it("starts no turn after an abort made as turn_end is emitted", () => {
    const events = runWithStop({ kind: "abort", at: "turn_end" });
    expect(checkEventGrammar(events)).toStrictEqual([]);
    expect(events.filter((event) => event.type === "turn_start")).toHaveLength(1);
    expect(events[events.length - 1]!.type).toBe("agent_end");
  });

  // Found by properties.test.ts (re-entrant pushes) as a follow-up pushed from the observer as
  // the turn_end of a failed turn is emitted: neither in the transcript nor in agent_end.queued.
  // Cause: the same eager decideNext; it built agent_end (with its queued snapshot) before
  // turn_end was emitted.
  it("reports a follow-up pushed as the last turn_end is emitted in agent_end.queued", () => {
    const scheduler = new TestScheduler(() => undefined);
    const events: AgentEvent[] = [];
    const followUps = new Subject<AgentMessage>();
    const late: AgentMessage = { role: "user", content: "one more thing", timestamp: 0 };
    scheduler.run(() => {
      const model = scriptedModel([{ stopReason: "error", errorMessage: "overloaded" }], { scheduler, delay: 1 });
      agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [] }, { model, scheduler, followUp: followUps }).subscribe((event) => {
        events.push(event);
        if (event.type === "turn_end") followUps.next(late);
      });
    });
    expect(events[events.length - 1]).toStrictEqual({
      type: "agent_end",
      messages: expect.any(Array),
      queued: { steering: [], followUp: [late] },
      reason: "failed",
      usage: emptyUsage(),
    });
  });

  // Found by every-index.test.ts as: unsubscribe (take) as a `tool_execution_start` is emitted,
  // with a beforeToolCall hook.
  it("calls no hook after an unsubscribe made as tool_execution_start is emitted", () => {
    let hookCalls = 0;
    let hookCallsAtStop = -1;
    runWithStop({ kind: "unsubscribe", at: "tool_execution_start" }, {
      beforeToolCall: () => {
        hookCalls += 1;
        return undefined;
      },
      onStop: () => (hookCallsAtStop = hookCalls),
    });
    expect(hookCallsAtStop).toBe(0);
    expect(hookCalls).toBe(0);
  });
});

/**
 * One turn with one asynchronous tool call (a `timer` in virtual time, reporting progress with
 * `update` just before its result), then a text reply; stops
 * from inside the observer at the first event of type `at`.
 */
function runWithStop(
  stop: { kind: "abort" | "unsubscribe"; at: AgentEventType },
  options: { beforeToolCall?: AgentLoopConfig["beforeToolCall"]; onStop?: () => void } = {},
): AgentEvent[] {
  const scheduler = new TestScheduler(() => undefined);
  const events: AgentEvent[] = [];
  scheduler.run(() => {
    const tool = defineTool({
      name: "slow",
      description: "answers after 5 ms",
      parameters: Type.Object({}),
      execute: (_id, _args, { update }) =>
        timer(5, scheduler).pipe(
          map(() => {
            update(textResult("almost"));
            return textResult("done");
          }),
        ),
    });
    const model = scriptedModel([{ content: [{ type: "toolCall", name: "slow", arguments: {} }] }, "bye"], { scheduler, delay: 1 });
    const controller = new AbortController();
    const config: AgentLoopConfig = { model, scheduler, signal: controller.signal };
    if (options.beforeToolCall) config.beforeToolCall = options.beforeToolCall;
    const loop$ = agentLoop([{ role: "user", content: "hi", timestamp: 0 }], { messages: [], tools: [tool] }, config);
    let stopped = false;
    const shouldStop = (event: AgentEvent) => !stopped && event.type === stop.at;
    // takeWhile(..., true) unsubscribes right after handing on the event it stops at.
    const events$ = stop.kind === "unsubscribe" ? loop$.pipe(takeWhile((event) => !shouldStop(event), true)) : loop$;
    events$.subscribe((event) => {
      events.push(event);
      if (!shouldStop(event)) return;
      stopped = true;
      options.onStop?.();
      if (stop.kind === "abort") controller.abort();
    });
  });
  return events;
}
