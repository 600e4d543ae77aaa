/**
 * Shrunk counterexamples the property tests found, kept as plain example tests. Each failed
 * before its fix.
 */
import { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { checkEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentEvent, Model } from "../../src/types.js";
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
});
