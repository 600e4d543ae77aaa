/**
 * Abort, and unsubscribe, at every event index of fixed scenarios, from inside the observer as
 * that event is emitted. Each run must end cleanly (abort) or go quiet at once (unsubscribe).
 */
import { describe, expect, it } from "vitest";
import { allProblems } from "./invariants.js";
import { runScenario } from "./run-scenario.js";
import type { Scenario, ToolCallPlan } from "./scenario.js";

const call = (tool: ToolCallPlan["tool"], outcome: ToolCallPlan["outcome"], latency: number, updates = 0): ToolCallPlan => ({
  tool,
  outcome,
  latency,
  updates,
  terminate: false,
});

/** Parallel fan-out under a limit, delayed hooks, every kind of tool failure, steering and a follow-up. */
const parallel: Scenario = {
  turns: [
    { calls: [call("work", "ok", 6, 2), call("capped", "error", 3), call("capped", "ok", 4, 1), call("work", "non-result", 2)], failure: "none" },
    { calls: [call("work", "timeout", 0), call("work", "invalid-args", 1), call("work", "unknown-tool", 1), call("work", "throw", 1)], failure: "none" },
    { calls: [call("serial", "ok", 3, 1), call("work", "empty", 2)], failure: "none" },
  ],
  modelDelay: 1,
  maxConcurrency: 2,
  toolExecution: "parallel",
  steeringMode: "one-at-a-time",
  followUpMode: "all",
  steeringInterruptsTools: false,
  beforeToolCall: { kind: "delayed", delay: 2 },
  blockEvery: 5,
  afterToolCall: { kind: "delayed", delay: 1 },
  transformContext: { kind: "delayed", delay: 1 },
  stopAfterTurns: undefined,
  steering: [12, 40],
  followUps: [30],
  steeringOnEvents: [],
  followUpsOnEvents: [],
  stop: { kind: "none" },
};

/** Sequential tools, steering that interrupts them, hooks answering at once. */
const sequential: Scenario = {
  ...parallel,
  toolExecution: "sequential",
  steeringInterruptsTools: true,
  beforeToolCall: { kind: "sync" },
  afterToolCall: { kind: "throw", every: 3 },
  transformContext: { kind: "sync" },
  steering: [25],
  followUps: [5, 60],
};

describe.each([
  ["parallel", parallel],
  ["sequential", sequential],
])("a %s scenario", (_name, scenario) => {
  const whole = runScenario(scenario);

  it("runs cleanly without a stop (the baseline of the loops below)", () => {
    expect(allProblems(scenario, whole)).toStrictEqual([]);
    expect(whole.events.length).toBeGreaterThan(60);
    expect(whole.tools.length).toBeGreaterThanOrEqual(4);
  });

  it("ends cleanly when aborted as any event is emitted", () => {
    const failures: string[] = [];
    for (let index = 0; index < whole.events.length; index++) {
      const run = runScenario(scenario, { stopAtEvent: { kind: "abort", index } });
      const problems = allProblems(scenario, run);
      // Nothing new starts after the abort: no turn (the first turn_start belongs to the opening).
      const later = run.events.slice(Math.max(index + 1, 2));
      if (later.some((event) => event.type === "turn_start")) problems.push("a turn started after the abort");
      const assistants = run.events.filter((event) => event.type === "message_start" && (event.message as { role?: string }).role === "assistant");
      if (assistants.length > whole.events.filter((event) => event.type === "message_start" && (event.message as { role?: string }).role === "assistant").length) {
        problems.push("more assistant messages than the whole run");
      }
      if (problems.length > 0) failures.push(`abort at #${index} (${whole.events[index]!.type}): ${problems.join("; ")}`);
    }
    expect(failures).toStrictEqual([]);
  });

  it("goes quiet when unsubscribed as any event is emitted", () => {
    const failures: string[] = [];
    for (let index = 0; index < whole.events.length - 1; index++) {
      const run = runScenario(scenario, { stopAtEvent: { kind: "unsubscribe", index } });
      const problems = allProblems(scenario, run);
      if (run.events.length !== index + 1) problems.push(`${run.events.length - index - 1} events after the unsubscribe`);
      if (!run.unsubscribed) problems.push("the run did not register the unsubscribe");
      if (problems.length > 0) failures.push(`unsubscribe at #${index} (${whole.events[index]!.type}): ${problems.join("; ")}`);
    }
    expect(failures).toStrictEqual([]);
  });
});
