import { Type } from "@sinclair/typebox";
import { mergeMap, NEVER, type SchedulerLike, timer } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent, defineTool } from "../../src/index.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/index.js";
import type { TestScheduler } from "rxjs/testing";
import { marbles } from "../helpers/marbles.js";

/** What each call's signal fired with, by call id. */
type Heard = Record<string, unknown>;

/** Reads its signal as it starts (so same-tool calls share one, call-signal-group.ts) and never finishes. */
function earlyReader(heard: Heard) {
  return defineTool({
    name: "early",
    description: "Waits forever",
    parameters: Type.Object({}),
    execute: (id, _args, { signal }) => {
      signal.addEventListener("abort", () => (heard[id] = signal.reason), { once: true });
      return NEVER;
    },
  });
}

/** Reads its signal only later (its own controller, made after the call started). */
function lateReader(heard: Heard, scheduler: SchedulerLike) {
  return defineTool({
    name: "late",
    description: "Reads its signal after 5 ms, then waits",
    parameters: Type.Object({}),
    execute: (id, _args, context) =>
      timer(5, scheduler).pipe(
        mergeMap(() => {
          context.signal.addEventListener("abort", () => (heard[id] = context.signal.reason), { once: true });
          // Never a result: the call only ends by the abort.
          return NEVER;
        }),
      ),
  });
}

const threeCalls: ScriptedTurn = {
  content: [
    { type: "toolCall", id: "a", name: "early", arguments: {} },
    { type: "toolCall", id: "b", name: "early", arguments: {} },
    { type: "toolCall", id: "c", name: "late", arguments: {} },
  ],
};

/**
 * Runs `threeCalls` on an Agent in virtual time and calls `abort` on it 40 ms in, while every
 * call runs; returns the agent and what each call's signal fired with.
 */
function abortedWhileCallsRun(scheduler: TestScheduler, abort: (agent: Agent) => void): { agent: Agent; heard: Heard } {
  const heard: Heard = {};
  const model = scriptedModel([threeCalls, "done"], { scheduler, delay: 1 });
  const agent = new Agent({ model, tools: [earlyReader(heard), lateReader(heard, scheduler)], scheduler });
  agent.prompt("go").subscribe();
  scheduler.schedule(() => abort(agent), 40);
  scheduler.flush();
  return { agent, heard };
}

describe("Agent.abort reason reaches the tools", () => {
  it(
    "abort({ reason }): every running call's signal fires with that reason, shared signals and own ones alike",
    marbles((m) => {
      const reason = new Error("The session moved to another process.");
      const { heard } = abortedWhileCallsRun(m.scheduler, (agent) => agent.abort({ reason }));
      expect(heard).toStrictEqual({ a: reason, b: reason, c: reason });
    }),
  );

  it(
    "abort() without a reason: the signals fire with the run's own reason, \"Aborted by the user\"",
    marbles((m) => {
      const { heard } = abortedWhileCallsRun(m.scheduler, (agent) => agent.abort());
      expect(Object.values(heard).map(String)).toStrictEqual(["Error: Aborted by the user", "Error: Aborted by the user", "Error: Aborted by the user"]);
    }),
  );

  // Found by a random run of the Agent's methods: abort(null) threw "Cannot read properties of
  // null (reading 'clearFollowUps')" and the run went on.
  it(
    "abort(null) from a JavaScript caller aborts as abort() does",
    marbles((m) => {
      const { agent, heard } = abortedWhileCallsRun(m.scheduler, (aborted) => aborted.abort(null as never));
      expect(Object.values(heard).map(String)).toStrictEqual(["Error: Aborted by the user", "Error: Aborted by the user", "Error: Aborted by the user"]);
      expect(agent.state.isStreaming).toBe(false);
    }),
  );
});
