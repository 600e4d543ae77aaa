/**
 * Tools and hooks that answer anything, in any way: a value of any shape, a Promise of it, a
 * rejection, a throw of anything, an Observable of several values or an error, a thenable whose
 * `then` throws, an object whose getters throw. For `execute`, `prepareArguments`,
 * `beforeToolCall`, `afterToolCall`, `transformContext`, `convertToLlm`, `shouldStopAfterTurn`
 * and `prepareNextTurn`, drawn at random and mixed (property-based, real time: a tool's Promise
 * settles on the microtask queue).
 *
 * Whatever they answer, the run ends as data: no Observable error, a well-formed event sequence
 * ending in `agent_end`, every tool result's content a list of text parts with a string text or
 * image parts with string data, and no rejection left unhandled (Node ends the process on one).
 * What a tool and its own hooks answer (`execute`, `prepareArguments`, `beforeToolCall`,
 * `afterToolCall`) is that call's outcome: the run never ends as failed for it. Answers include
 * values that cannot be read without a throw (a Proxy whose traps throw, a revoked Proxy, a value
 * whose `toString` and `toJSON` throw, an Error whose `message` getter throws).
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
import { hostileProxy, revokedProxy, throwingGetter } from "../helpers/unreadable-values.js";

/**
 * A stand-in for a value that cannot be read, or written as text, without a throw, made only as
 * the hook answers (`materialized`): fast-check itself reads the values it draws, to copy and to
 * print them.
 */
class Unreadable {
  constructor(
    readonly kind: "hostile proxy" | "revoked proxy" | "unwritable value" | "error whose message throws",
    readonly placed: "bare" | "block reason" | "details" | "content part",
  ) {}

  toString(): string {
    return `Unreadable(${this.kind}, ${this.placed})`;
  }
}

function materialized(value: unknown): unknown {
  if (!(value instanceof Unreadable)) return value;
  const made = unreadableValue(value.kind);
  switch (value.placed) {
    case "bare":
      return made;
    case "block reason":
      return { block: true, reason: made };
    case "details":
      return { content: [{ type: "text", text: "ok" }], details: made };
    case "content part":
      return { content: [made] };
  }
}

function unreadableValue(kind: Unreadable["kind"]): unknown {
  if (kind === "hostile proxy") return hostileProxy();
  if (kind === "revoked proxy") return revokedProxy();
  if (kind === "unwritable value") {
    return {
      toString(): string {
        throw new Error("no text");
      },
      toJSON(): string {
        throw new Error("no JSON");
      },
    };
  }
  return Object.setPrototypeOf(throwingGetter("message", "message getter throws"), Error.prototype) as Error;
}

const unreadable = fc
  .record({
    kind: fc.constantFrom<Unreadable["kind"]>("hostile proxy", "revoked proxy", "unwritable value", "error whose message throws"),
    placed: fc.constantFrom<Unreadable["placed"]>("bare", "block reason", "details", "content part"),
  })
  .map(({ kind, placed }) => new Unreadable(kind, placed));

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
  unreadable,
  fc.constant({ block: true, reason: { code: 7 } }),
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
function give({ way, value: drawnValue }: Answer): unknown {
  const value = way === "observable" ? (drawnValue as unknown[]).map(materialized) : materialized(drawnValue);
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

/** A drawn run: its tool's and hooks' answers; `runHooks: false` leaves out the hooks of the run (the context, the turn), so every run reaches its tools. */
function planOf({ runHooks }: { runHooks: boolean }) {
  const runHook = runHooks ? fc.option(answer) : fc.constant(null);
  return fc.record({
    execute: answer,
    prepareArguments: fc.option(answer),
    beforeToolCall: fc.option(answer),
    afterToolCall: fc.option(answer),
    transformContext: runHook,
    convertToLlm: runHook,
    shouldStopAfterTurn: runHook,
    prepareNextTurn: runHook,
    toolExecution: fc.constantFrom<"parallel" | "sequential">("parallel", "sequential"),
    calls: fc.integer({ min: 1, max: 3 }),
  });
}

const plan = planOf({ runHooks: true });
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

/** A tool result's part as every provider and client reads it: text with a string, or an image with string data. */
function isWellFormedPart(part: unknown): boolean {
  if (typeof part !== "object" || part === null) return false;
  const { type, text, data } = part as { type?: unknown; text?: unknown; data?: unknown };
  return (type === "text" && typeof text === "string") || (type === "image" && typeof data === "string");
}

describe("tools and hooks that answer anything (property-based)", () => {
  /** The checks every run passes, whatever was drawn. */
  async function checkRun(drawn: Plan): Promise<AgentEvent[]> {
    unhandled.length = 0;
    const { events, error } = await runPlan(drawn);
    expect(error).toBeUndefined();
    expect(checkEventGrammar(events)).toStrictEqual([]);
    expect(events.at(-1)?.type).toBe("agent_end");
    for (const event of events) {
      if (event.type !== "message_end" || event.message.role !== "toolResult") continue;
      expect(Array.isArray(event.message.content) && event.message.content.every(isWellFormedPart)).toBe(true);
    }
    expect(unhandled).toStrictEqual([]);
    return events;
  }

  it("end every run as data, with agent_end, well-formed tool results and no rejection left unhandled", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(plan, async (drawn) => {
        await checkRun(drawn);
      }),
      { numRuns: 200 },
    );
  });

  // Drawn with the run's hooks as well, most runs never reached their tools (a context hook's
  // junk ended them first): a beforeToolCall reason that was not a text, and a tool's
  // unreadable result, both passed.
  it("with only the tool's own answers drawn, every run reaches its tools, and none ends as failed", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(planOf({ runHooks: false }), async (drawn) => {
        const events = await checkRun(drawn);
        expect(events.some((event) => event.type === "message_end" && event.message.role === "toolResult")).toBe(true);
        expect(events.at(-1)).not.toMatchObject({ reason: "failed" });
      }),
      { numRuns: 200 },
    );
  });
});
