import { Type } from "@sinclair/typebox";
import { map, NEVER, type Observable, of, type SchedulerAction, type SchedulerLike, type Subscription, timer } from "rxjs";
import { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import { agentLoop, agentLoopReopened } from "../../src/streams/agent-loop.js";
import { reopenedToolCalls } from "../../src/streams/transcript/reopened-tool-calls.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentToolResult } from "../../src/types.js";
import { assistantMessage, toolCall, userMessage } from "../testing/fixtures.js";

/**
 * A run in virtual time (`toolTimeoutMs: 100`) whose scheduler records every timer armed on it
 * with a delay, as `[frame, delay]`: the model answers at once and the tools' own timers run on
 * the TestScheduler itself, so the only such timers are the tool deadlines' (the loop's other
 * scheduling, a turn handed on, has no delay). A call named
 * in `answerAfter` answers after that many frames; any other never answers. With `reopen`, the
 * run is reopened (`Agent.open`) with that call waiting for approval, approved at once.
 */
function setup(turns: ScriptedTurn[], answerAfter: Record<string, number> = {}, reopen?: string) {
  const testScheduler = new TestScheduler((actual, expected) => expect(actual).toStrictEqual(expected));
  const armed: [number, number][] = [];
  const scheduler: SchedulerLike = {
    now: () => testScheduler.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      if (delay > 0) armed.push([testScheduler.now(), delay]);
      return testScheduler.schedule(work, delay, state);
    },
  };
  const answer = (id: string): Observable<AgentToolResult> => {
    const after = answerAfter[id];
    return after === undefined ? NEVER : timer(after, testScheduler).pipe(map(() => textResult(id)));
  };
  const work = defineTool({ name: "work", description: "w", parameters: Type.Object({}), execute: (id) => answer(id) });
  const model = scriptedModel(turns, { scheduler });
  const config = { model, scheduler, toolTimeoutMs: 100 };
  let run$: Observable<AgentEvent>;
  if (reopen === undefined) run$ = agentLoop([userMessage("go", 0)], { messages: [], tools: [work] }, config);
  else {
    const messages = [userMessage("go", 0), assistantMessage([toolCall(reopen, "work")], { stopReason: "toolUse" })];
    const records = [{ type: "approval_pending" as const, approval: { toolCallId: reopen, toolName: "work", args: {}, since: 0 } }];
    const reopened = reopenedToolCalls(messages, records, 0, () => undefined)!;
    run$ = agentLoopReopened(reopened, { messages, tools: [work] }, { ...config, approvals: of({ toolCallId: reopen, approved: true }) });
  }
  // Each call's end as `frame id outcome`, and the frame the run completed at: a timer left armed
  // after it would move the clock on when the test flushes the scheduler.
  const ends: string[] = [];
  const seen = { completedAt: undefined as number | undefined };
  const observer = {
    next: (event: AgentEvent) => {
      if (event.type === "tool_execution_end") ends.push(`${testScheduler.now()} ${event.toolCallId} ${event.isError ? "failed" : "ok"}`);
    },
    complete: () => (seen.completedAt = testScheduler.now()),
  };
  return { testScheduler, armed, run$, ends, seen, observer };
}

const callTurn = (id: string): ScriptedTurn => ({ content: [{ type: "toolCall", id, name: "work", arguments: {} }] });

describe("the run's tool deadlines: one timer for all its batches", () => {
  it("times calls of two consecutive turns out, each at its own deadline, one timer at a time", () => {
    const { testScheduler, armed, run$, ends, seen, observer } = setup([callTurn("a"), callTurn("b"), "Done"]);
    run$.subscribe(observer);
    testScheduler.flush();
    expect(ends).toStrictEqual(["100 a failed", "200 b failed"]);
    // For a's deadline; when it fired, b had started, and it was armed again for b's.
    expect(armed).toStrictEqual([
      [0, 100],
      [100, 100],
    ]);
    expect(seen.completedAt).toBe(200);
    expect(testScheduler.now()).toBe(200);
  });

  it("keeps the timer a first turn armed for the later turns' calls, and it fires none of them early", () => {
    const { testScheduler, armed, run$, ends, seen, observer } = setup([callTurn("a"), callTurn("b"), callTurn("c"), "Done"], { a: 10, b: 10 });
    run$.subscribe(observer);
    testScheduler.flush();
    // c started at 20: it times out at 120, not at 100, when the timer armed for a fires.
    expect(ends).toStrictEqual(["10 a ok", "20 b ok", "120 c failed"]);
    // Armed once, for a's deadline (100): b's (110) and c's (120) were later and needed no timer;
    // at 100 nothing had expired, and it was armed again for c's.
    expect(armed).toStrictEqual([
      [0, 100],
      [100, 20],
    ]);
    expect(seen.completedAt).toBe(120);
    expect(testScheduler.now()).toBe(120);
  });

  it("cancels the timer as the run ends, though every call it was armed for has left", () => {
    const { testScheduler, armed, run$, ends, seen, observer } = setup([callTurn("a"), "Done"], { a: 10 });
    run$.subscribe(observer);
    testScheduler.flush();
    expect(ends).toStrictEqual(["10 a ok"]);
    expect(armed).toStrictEqual([[0, 100]]);
    expect(seen.completedAt).toBe(10);
    expect(testScheduler.now()).toBe(10);
  });

  it("cancels the timer when the run is unsubscribed mid-run, after a turn's calls left it armed", () => {
    const { testScheduler, armed, run$, ends, observer } = setup([callTurn("a"), callTurn("b"), "Done"], { a: 10 });
    const subscription = run$.subscribe(observer);
    testScheduler.schedule(() => subscription.unsubscribe(), 50);
    testScheduler.flush();
    expect(ends).toStrictEqual(["10 a ok"]);
    expect(armed).toStrictEqual([[0, 100]]);
    // Nothing was left to run after the unsubscribe: the clock stopped there.
    expect(testScheduler.now()).toBe(50);
    expect(testScheduler.actions).toStrictEqual([]);
  });

  it("cancels the timer when the run is unsubscribed while a call waits for its deadline", () => {
    const { testScheduler, run$, ends, observer } = setup([callTurn("a"), "Done"]);
    const subscription = run$.subscribe(observer);
    testScheduler.schedule(() => subscription.unsubscribe(), 50);
    testScheduler.flush();
    expect(ends).toStrictEqual([]);
    expect(testScheduler.now()).toBe(50);
    expect(testScheduler.actions).toStrictEqual([]);
  });

  it("cancels the timer as a reopened run ends, which its reopened calls armed", () => {
    const { testScheduler, armed, run$, ends, seen, observer } = setup(["Done"], { r: 10 }, "r");
    run$.subscribe(observer);
    testScheduler.flush();
    expect(ends).toStrictEqual(["10 r ok"]);
    expect(armed).toStrictEqual([[0, 100]]);
    expect(seen.completedAt).toBe(10);
    expect(testScheduler.now()).toBe(10);
  });
});
