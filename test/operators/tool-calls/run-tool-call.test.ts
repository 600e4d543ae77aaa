import { Type } from "@sinclair/typebox";
import { concat, EMPTY, filter, type Observable, of, throwError } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../../src/streams/agent-loop.js";
import { scriptedModel } from "../../../src/testing/scripted-model.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { errorResult, textResult } from "../../../src/tools/tool-results.js";
import type { AgentEvent, AgentTool, AgentToolResult, ToolExecuteResult } from "../../../src/types.js";
import { marbles } from "../../helpers/marbles.js";
import { lettered, userMessage } from "../../testing/fixtures.js";
import { call, runToolTurn, runToolTurnAsync } from "./run-tools.js";
import { hostileProxy, throwingGetter } from "../../helpers/unreadable-values.js";

function toolReturning(name: string, execute: (update: (partial: AgentToolResult) => void) => ToolExecuteResult): AgentTool {
  return defineTool({ name, description: name, parameters: Type.Object({}), execute: (_id, _args, { update }) => execute(update) });
}

describe("running tool calls", () => {
  describe("failures become error results", () => {
    it("execute throws, returns an erroring Observable, returns a non-result or nothing", () => {
      const tools = [
        toolReturning("throws", () => {
          throw new Error("disk full");
        }),
        toolReturning("errors", () => throwError(() => new Error("stream broke"))),
        toolReturning("odd", () => ({ text: "not a result" }) as never),
        toolReturning("empty", () => EMPTY),
        toolReturning("fine", () => textResult("ok")),
      ];
      const turn = runToolTurn(tools, ["throws", "errors", "odd", "empty", "fine"].map((name) => call(name, {})));
      expect(turn.texts).toStrictEqual([
        "disk full",
        "stream broke",
        'Tool "odd" returned something that is not a tool result ({ content: [...], details }).',
        'Tool "empty" returned no result.',
        "ok",
      ]);
      expect(turn.results.map((result) => result.isError)).toStrictEqual([true, true, true, true, false]);
      expect(turn.ends.map((end) => end.isError)).toStrictEqual([true, true, true, true, false]);
    });

    it("execute rejects (real async)", async () => {
      const turn = await runToolTurnAsync([toolReturning("rejects", () => Promise.reject(new Error("network down")))], [call("rejects", {})]);
      expect(turn.texts).toStrictEqual(["network down"]);
      expect(turn.results[0]!.isError).toBe(true);
    });
  });

  it("a Promise whose result throws as it is read is the tool's failure, not an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const throwing = {
        get content(): never {
          throw new Error("content unreadable");
        },
      } as unknown as AgentToolResult;
      const turn = await runToolTurnAsync([toolReturning("reads_badly", () => Promise.resolve(throwing))], [call("reads_badly", {})]);
      // A macrotask: Node reports unhandled rejections after the microtasks have run.
      await new Promise((resolve) => setImmediate(resolve));
      expect([turn.texts, turn.results[0]!.isError, unhandled]).toStrictEqual([['Tool "reads_badly" returned a result that could not be read: content unreadable'], true, []]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("a Promise-returning tool (real async) gets its result in call order", async () => {
    // The first call settles only after the second has, by a gate rather than by two timers whose
    // gap a loaded machine can close (20 ms against 1 ms failed at load 10): the second call opens
    // the gate one macrotask after it returns, when its end has gone out.
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const gated = defineTool({
      name: "gated",
      description: "s",
      parameters: Type.Object({ waits: Type.Boolean() }),
      execute: async (_id, { waits }) => {
        if (waits) await gate;
        else setImmediate(openGate);
        return textResult(waits ? "waited" : "went first", { waits });
      },
    });
    const turn = await runToolTurnAsync([gated], [call("gated", { waits: true }), call("gated", { waits: false })]);
    expect(turn.ends.map((end) => (end.result as AgentToolResult).details)).toStrictEqual([{ waits: false }, { waits: true }]);
    expect(turn.texts).toStrictEqual(["waited", "went first"]);
    expect(turn.results.map((result) => result.details)).toStrictEqual([{ waits: true }, { waits: false }]);
  });

  describe("progress", () => {
    const p1 = textResult("10%");
    const p2 = textResult("50%");
    const done = textResult("done");
    const update = (id: string, name: string, partialResult: AgentToolResult): AgentEvent => ({ type: "tool_execution_update", toolCallId: id, toolName: name, args: {}, partialResult });
    const start = (id: string, name: string): AgentEvent => ({ type: "tool_execution_start", toolCallId: id, toolName: name, args: {} });
    const end = (id: string, name: string, result: AgentToolResult, isError = false): AgentEvent => ({ type: "tool_execution_end", toolCallId: id, toolName: name, result, isError });

    it("reports progress from update() calls and from an Observable's values that more values follow", () => {
      const tools = [
        toolReturning("updates", (update) => {
          update(p1);
          update(p2);
          return done;
        }),
        toolReturning("streams", () => of(p1, p2, done)),
        toolReturning("single", () => of(done)),
        toolReturning("fails", () => concat(of(p1), throwError(() => new Error("stream broke")))),
      ];
      const turn = runToolTurn(tools, [call("updates", {}, "u"), call("streams", {}, "s"), call("single", {}, "o"), call("fails", {}, "f")]);
      expect(turn.events.filter((event) => event.type.startsWith("tool_execution"))).toStrictEqual([
        start("u", "updates"),
        update("u", "updates", p1),
        update("u", "updates", p2),
        end("u", "updates", done),
        // The last value completes the Observable, so it is the result and not progress.
        start("s", "streams"),
        update("s", "streams", p1),
        update("s", "streams", p2),
        end("s", "streams", done),
        start("o", "single"),
        end("o", "single", done),
        // A value the Observable errors after was progress.
        start("f", "fails"),
        update("f", "fails", p1),
        end("f", "fails", errorResult("stream broke"), true),
      ] satisfies AgentEvent[]);
      expect(turn.texts).toStrictEqual(["done", "done", "done", "stream broke"]);
    });

    it(
      "reports an Observable's value as progress at its frame when the Observable has not completed by then",
      marbles((m) => {
        // streams: 10ms p1 19ms p2 9ms (done|)   p1 and p2 are progress; done is only the result
        // late:    20ms done 4ms |                 done is progress at 20 (more might follow), then the result at 25
        const bodies: Record<string, Observable<AgentToolResult>> = {
          s: m.cold("10ms a 19ms b 9ms (r|)", { a: p1, b: p2, r: done }),
          l: m.cold("20ms r 4ms |", { r: done }),
        };
        const tools = [
          defineTool({ name: "streams", description: "s", parameters: Type.Object({}), execute: (id) => bodies[id]! }),
          defineTool({ name: "late", description: "l", parameters: Type.Object({}), execute: (id) => bodies[id]! }),
        ];
        const model = scriptedModel([{ content: [call("streams", {}, "s"), call("late", {}, "l")] }, "ok"], { scheduler: m.scheduler });
        const toolEvents$ = agentLoop([userMessage("go")], { messages: [], tools }, { model, scheduler: m.scheduler }).pipe(
          filter((event) => event.type.startsWith("tool_execution")),
        );
        const expected: AgentEvent[] = [
          start("s", "streams"), start("l", "late"),
          update("s", "streams", p1),
          update("l", "late", done),
          end("l", "late", done),
          update("s", "streams", p2),
          end("s", "streams", done),
        ];
        m.expect(toolEvents$).toBeObservable("(ab) 6ms c 9ms d 4ms e 4ms f 9ms (g|)", lettered(expected));
        m.expect(bodies.s!).toHaveSubscriptions("^ 39ms !");
        m.expect(bodies.l!).toHaveSubscriptions("^ 24ms !");
      }),
    );
  });

  describe("afterToolCall", () => {
    const plain = () => toolReturning("plain", () => textResult("original", { n: 1 }));

    // Telling a Promise or an Observable from a plain answer read the Proxy outside any try: the
    // whole run failed (the property test of hook answers found it on Node 24, in CI).
    it("answers an override that is a Proxy whose traps throw with an error result for the call, and the run goes on", () => {
      const turn = runToolTurn([plain()], [call("plain", {}, "a")], { afterToolCall: () => hostileProxy() as never });
      expect(turn.texts).toStrictEqual(['afterToolCall failed for tool "plain": proxy refused getPrototypeOf']);
      expect([turn.results[0]!.isError, turn.modelCalls]).toStrictEqual([true, 2]);
    });

    // A details getter that threw as the override was checked failed the whole run.
    it("answers an override that cannot be read with an error result for the call, and the run goes on", () => {
      const turn = runToolTurn([plain()], [call("plain", {}, "a")], {
        afterToolCall: () => ({ details: throwingGetter("audit", "audit log gone") }),
      });
      expect(turn.texts).toStrictEqual(['afterToolCall for tool "plain" answered something that is not an override: it could not be read (audit log gone).']);
      expect([turn.results[0]!.isError, turn.modelCalls]).toStrictEqual([true, 2]);
    });

    it("overrides content, details, isError and terminate field by field", () => {
      const seen: unknown[] = [];
      const turn = runToolTurn([plain()], [call("plain", {}, "a"), call("plain", {}, "b"), call("plain", {}, "c")], {
        afterToolCall: ({ toolCall, result, isError }) => {
          seen.push([toolCall.id, result, isError]);
          if (toolCall.id === "a") return { content: [{ type: "text", text: "rewritten" }] };
          if (toolCall.id === "b") return { details: { audited: true }, isError: true };
          return undefined;
        },
      });
      expect(seen).toStrictEqual([
        ["a", textResult("original", { n: 1 }), false],
        ["b", textResult("original", { n: 1 }), false],
        ["c", textResult("original", { n: 1 }), false],
      ]);
      expect(turn.results.map(({ content, details, isError }) => ({ content, details, isError }))).toStrictEqual([
        { content: [{ type: "text", text: "rewritten" }], details: { n: 1 }, isError: false },
        { content: [{ type: "text", text: "original" }], details: { audited: true }, isError: true },
        { content: [{ type: "text", text: "original" }], details: { n: 1 }, isError: false },
      ]);
      expect(turn.ends.map((end) => end.isError)).toStrictEqual([false, true, false]);
      expect(turn.modelCalls).toBe(2);
    });

    it("terminate from afterToolCall on every result ends the run after the batch", () => {
      const turn = runToolTurn([plain()], [call("plain", {}), call("plain", {})], { afterToolCall: () => ({ terminate: true }) });
      expect(turn.modelCalls).toBe(1);
      expect(turn.events.map((event) => event.type).slice(-2)).toStrictEqual(["turn_end", "agent_end"]);
    });

    it("answers a throwing afterToolCall with an error result", () => {
      const turn = runToolTurn([plain()], [call("plain", {})], {
        afterToolCall: () => {
          throw new Error("audit failed");
        },
      });
      expect(turn.texts).toStrictEqual(['afterToolCall failed for tool "plain": audit failed']);
      expect(turn.results[0]!.isError).toBe(true);
    });

    it("is not asked about calls that never ran (unknown tool, invalid arguments, blocked)", () => {
      const asked: string[] = [];
      const strict = defineTool({ name: "strict", description: "s", parameters: Type.Object({ a: Type.Number() }), execute: () => textResult("ran") });
      const turn = runToolTurn([strict], [call("nope", {}), call("strict", { a: "x" }), call("strict", { a: 1 }), call("strict", { a: 2 })], {
        beforeToolCall: ({ args }) => ((args as { a: number }).a === 1 ? { block: true, reason: "no" } : undefined),
        afterToolCall: ({ toolCall }) => {
          asked.push(toolCall.id);
          return undefined;
        },
      });
      expect(asked).toStrictEqual(["call_1_4"]);
      expect(turn.results.map((result) => result.isError)).toStrictEqual([true, true, true, false]);
    });
  });

  describe("terminate", () => {
    const finishing = (terminate: boolean) => toolReturning(`finish_${terminate}`, () => ({ ...textResult("x"), terminate }));

    it("ends the run early only when every result of the batch asks to", () => {
      const all = runToolTurn([finishing(true)], [call("finish_true", {}), call("finish_true", {})]);
      expect(all.modelCalls).toBe(1);
      const some = runToolTurn([finishing(true), finishing(false)], [call("finish_true", {}), call("finish_false", {})]);
      expect(some.modelCalls).toBe(2);
    });
  });
});
