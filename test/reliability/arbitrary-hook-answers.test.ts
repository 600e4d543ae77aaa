/**
 * Tools and hooks that answer anything, in any way: a value of any shape, a Promise of it, a
 * rejection, a throw of anything, an Observable of several values or an error, a thenable whose
 * `then` throws, an object whose getters throw. For `execute`, `prepareArguments`,
 * `beforeToolCall`, `afterToolCall`, `transformContext`, `convertToLlm`, `shouldStopAfterTurn`
 * and `prepareNextTurn`, drawn at random and mixed (property-based, real time: a tool's Promise
 * settles on the microtask queue).
 *
 * Whatever they answer, the run ends as data: no Observable error, a well-formed event sequence
 * ending in `agent_end`, every tool result's content a list of objects, and no rejection left
 * unhandled (Node ends the process on one).
 */
import { Type } from "@sinclair/typebox";
import fc from "fast-check";
import { from, throwError } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { checkEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { AgentEvent, AgentLoopConfig, AgentTool } from "../../src/types.js";
import { userMessage } from "../testing/fixtures.js";

/** Answers a careless hook gives: anything, and near misses of the shapes the loop expects. */
const anything = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.constantFrom(
    undefined,
    null,
    NaN,
    "",
    [],
    {},
    { content: "text" },
    { content: [null] },
    { content: [{ type: "text" }] },
    { content: [{ type: "image" }] },
    { content: [{ type: "text", text: "ok" }], details: 1 },
    { block: true },
    { block: "yes", reason: 5 },
    { isError: "no" },
    { terminate: true, content: [] },
    [null],
    [{ role: "user" }],
    [{ role: "user", content: 5 }],
  ),
);

type Way = "value" | "promise" | "rejection" | "throw" | "observable" | "observable error" | "thenable whose then throws" | "getters that throw";

interface Answer {
  way: Way;
  value: unknown;
}

const answer: fc.Arbitrary<Answer> = fc.oneof(
  fc.record({ way: fc.constantFrom<Way>("value", "promise", "rejection", "throw", "observable error"), value: anything }),
  fc.record({ way: fc.constant<Way>("observable"), value: fc.array(anything, { maxLength: 3 }) }),
  fc.record({ way: fc.constantFrom<Way>("thenable whose then throws", "getters that throw"), value: fc.constant(undefined) }),
);

/** The answer given the way it was drawn; a throw is thrown here, by the hook. */
function give({ way, value }: Answer): unknown {
  switch (way) {
    case "value":
      return value;
    case "promise":
      return Promise.resolve(value);
    case "rejection":
      return Promise.reject(value);
    case "throw":
      throw value;
    case "observable":
      return from(value as unknown[]);
    case "observable error":
      return throwError(() => value);
    case "thenable whose then throws":
      return {
        then() {
          throw new Error("then throws");
        },
      };
    case "getters that throw":
      return {
        get content() {
          throw new Error("content getter throws");
        },
        get block() {
          throw new Error("block getter throws");
        },
      };
  }
}

const plan = fc.record({
  execute: answer,
  prepareArguments: fc.option(answer),
  beforeToolCall: fc.option(answer),
  afterToolCall: fc.option(answer),
  transformContext: fc.option(answer),
  convertToLlm: fc.option(answer),
  shouldStopAfterTurn: fc.option(answer),
  prepareNextTurn: fc.option(answer),
  toolExecution: fc.constantFrom<"parallel" | "sequential">("parallel", "sequential"),
  calls: fc.integer({ min: 1, max: 3 }),
});

type Plan = typeof plan extends fc.Arbitrary<infer Drawn> ? Drawn : never;

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => process.on("unhandledRejection", onUnhandled));
afterAll(() => process.off("unhandledRejection", onUnhandled));

/** Runs one drawn plan to its end (or to `limitMs`, a limit that holds at a load of 8, not a margin). */
async function runPlan(drawn: Plan, limitMs = 20_000): Promise<{ events: AgentEvent[]; error: unknown }> {
  const tool = defineTool({
    name: "work",
    description: "Work.",
    parameters: Type.Object({ n: Type.Number() }),
    execute: () => give(drawn.execute) as never,
    ...(drawn.prepareArguments ? { prepareArguments: () => give(drawn.prepareArguments!) } : {}),
  }) as AgentTool;
  const calls = Array.from({ length: drawn.calls }, (_, n) => ({ type: "toolCall" as const, name: "work", arguments: { n } }));
  const config: AgentLoopConfig = { model: scriptedModel([{ content: calls }, { content: calls }, "done", "done", "done"]), toolExecution: drawn.toolExecution, maxTurns: 4, toolTimeoutMs: 1_000 };
  const hook = (drawnAnswer: Answer | null) => (drawnAnswer ? () => give(drawnAnswer) as never : undefined);
  Object.assign(config, Object.fromEntries(Object.entries({
    beforeToolCall: hook(drawn.beforeToolCall),
    afterToolCall: hook(drawn.afterToolCall),
    transformContext: hook(drawn.transformContext),
    convertToLlm: hook(drawn.convertToLlm),
    shouldStopAfterTurn: hook(drawn.shouldStopAfterTurn),
    prepareNextTurn: hook(drawn.prepareNextTurn),
  }).filter(([, value]) => value !== undefined)));
  const events: AgentEvent[] = [];
  const error = await new Promise<unknown>((resolve) => {
    const limit = setTimeout(() => resolve(new Error(`the run did not end within ${limitMs} ms`)), limitMs);
    agentLoop([userMessage("go")], { systemPrompt: "", messages: [], tools: [tool] }, config).subscribe({
      next: (event) => events.push(event),
      error: (failure: unknown) => {
        clearTimeout(limit);
        resolve(failure ?? new Error("the run errored with nothing"));
      },
      complete: () => {
        clearTimeout(limit);
        resolve(undefined);
      },
    });
  });
  // A rejection left unhandled is reported after the microtasks that could still handle it.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return { events, error };
}

describe("tools and hooks that answer anything (property-based)", () => {
  it("end every run as data, with agent_end, well-formed tool results and no rejection left unhandled", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(plan, async (drawn) => {
        unhandled.length = 0;
        const { events, error } = await runPlan(drawn);
        expect(error).toBeUndefined();
        expect(checkEventGrammar(events)).toStrictEqual([]);
        expect(events.at(-1)?.type).toBe("agent_end");
        for (const event of events) {
          if (event.type !== "message_end" || event.message.role !== "toolResult") continue;
          expect(Array.isArray(event.message.content) && event.message.content.every((block) => typeof block === "object" && block !== null)).toBe(true);
        }
        expect(unhandled).toStrictEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});
