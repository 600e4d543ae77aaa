/**
 * A smaller property in real time, for what virtual time cannot show: tools that return Promises
 * (resolving, rejecting, throwing, timing out), the real `asyncScheduler`, aborts at random real
 * moments. Each run must end well formed and leave no timer or handle behind, and no rejection
 * may go unhandled.
 */
import { Type } from "@sinclair/typebox";
import fc from "fast-check";
import { lastValueFrom, toArray } from "rxjs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { checkEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel, type ScriptedReply } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentToolResult } from "../../src/types.js";
import { toolResultProblems } from "./invariants.js";

type PromiseOutcome = "resolve" | "reject" | "throw" | "timeout" | "reject-non-error";

interface AsyncScenario {
  turns: { ms: number; outcome: PromiseOutcome }[][];
  abortAfterMs: number | undefined;
  maxConcurrency: number | undefined;
}

const asyncScenario: fc.Arbitrary<AsyncScenario> = fc.record({
  turns: fc.array(
    fc.array(
      fc.record({
        ms: fc.integer({ min: 0, max: 4 }),
        outcome: fc.constantFrom<PromiseOutcome>("resolve", "resolve", "reject", "throw", "timeout", "reject-non-error"),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    { minLength: 1, maxLength: 3 },
  ),
  abortAfterMs: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
  maxConcurrency: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
});

/** Sleeps `ms` real milliseconds, or rejects at once when the signal fires (clearing its timer). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timeout = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timeout);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

const TIMEOUT_MS = 6;

const tool = defineTool({
  name: "promised",
  description: "answers with a Promise",
  parameters: Type.Object({ ms: Type.Number(), outcome: Type.String() }),
  timeoutMs: TIMEOUT_MS,
  execute: (_id, { ms, outcome }, { signal }): Promise<AgentToolResult> => {
    if (outcome === "throw") throw new Error("thrown before any Promise");
    return sleep(outcome === "timeout" ? TIMEOUT_MS + 10 : ms, signal).then(() => {
      if (outcome === "reject") throw new Error("rejected");
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      if (outcome === "reject-non-error") throw { code: 42 };
      return textResult(`slept ${ms}`);
    });
  },
});

function timers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === "Timeout" || name === "Immediate").length;
}

async function runAsyncScenario(scenario: AsyncScenario): Promise<string[]> {
  const replies: ScriptedReply[] = scenario.turns.map((calls) => ({
    content: calls.map((call) => ({ type: "toolCall" as const, name: "promised", arguments: { ms: call.ms, outcome: call.outcome } })),
  }));
  const model = scriptedModel([...replies, "done"]);
  const controller = new AbortController();
  const abortTimer = scenario.abortAfterMs === undefined ? undefined : setTimeout(() => controller.abort(), scenario.abortAfterMs);
  const config = { model, signal: controller.signal, ...(scenario.maxConcurrency === undefined ? {} : { maxConcurrency: scenario.maxConcurrency }) };
  const events: AgentEvent[] = await lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [tool] }, config).pipe(toArray()));
  clearTimeout(abortTimer);
  return [...checkEventGrammar(events), ...toolResultProblems(events, true)];
}

describe("agentLoop with Promise tools in real time (property-based)", () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    process.on("unhandledRejection", onUnhandled);
  });
  afterEach(() => {
    process.off("unhandledRejection", onUnhandled);
  });

  it("ends every run well formed, leaves no timer behind, and leaves no rejection unhandled", async () => {
    await fc.assert(
      fc.asyncProperty(asyncScenario, async (scenario) => {
        const before = timers();
        unhandled.length = 0;
        const problems = await runAsyncScenario(scenario);
        // Let settled Promises run their callbacks before counting.
        // Node reports a rejection left unhandled once the task that rejected it has run its
        // microtasks: by this next task, every one of the run's has been reported.
        await new Promise((resolve) => setImmediate(resolve));
        const after = timers();
        if (after > before) problems.push(`${after - before} timers left behind`);
        if (unhandled.length > 0) problems.push(`unhandled rejections: ${unhandled.map(String).join("; ")}`);
        expect(problems).toStrictEqual([]);
      }),
      { numRuns: 120 },
    );
  });
});
