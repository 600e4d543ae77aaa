import { Type } from "@sinclair/typebox";
import { asyncScheduler, delay, EMPTY, of } from "rxjs";
import { describe, expect, it } from "vitest";
import { prepareToolCalls } from "../../../src/operators/tool-calls/prepare-tool-call.js";
import { BatchInterruption, FinalizedToolCall, PreparedToolCall, type ToolBatch } from "../../../src/operators/tool-calls/tool-batch.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { textResult } from "../../../src/tools/tool-results.js";
import { emptyUsage } from "../../../src/types/messages.js";
import type { AgentEvent } from "../../../src/types.js";
import { LazyAbortController } from "../../../src/util/lazy-abort-controller.js";
import { toolCall } from "../../testing/fixtures.js";
import { call, runToolTurn, runToolTurnAsync } from "./run-tools.js";
import { watchedRejection } from "../../helpers/watched-rejection.js";
import { throwingGetter } from "../../helpers/unreadable-values.js";

function addTool() {
  const received: unknown[] = [];
  const tool = defineTool({
    name: "add",
    description: "Adds",
    parameters: Type.Object({ a: Type.Number(), b: Type.Number(), round: Type.Boolean({ default: false }) }),
    execute: (_id, args) => {
      received.push(args);
      return textResult(String(args.a + args.b));
    },
  });
  return { tool, received };
}

describe("preparing tool calls", () => {
  it('answers an unknown tool with "Tool X not found" and the tools available, announced like any call', () => {
    const { tool, received } = addTool();
    const turn = runToolTurn([tool], [call("nope", { a: 1 }, "c1")]);
    expect(turn.texts).toStrictEqual(["Tool nope not found. Available tools: add."]);
    expect(turn.results[0]).toMatchObject({ isError: true, details: {} });
    expect(turn.events.filter((event) => event.type.startsWith("tool_execution"))).toStrictEqual([
      { type: "tool_execution_start", toolCallId: "c1", toolName: "nope", args: { a: 1 } },
      { type: "tool_execution_end", toolCallId: "c1", toolName: "nope", result: { content: [{ type: "text", text: "Tool nope not found. Available tools: add." }], details: {} }, isError: true },
    ] satisfies AgentEvent[]);
    expect(received).toHaveLength(0);
    expect(turn.modelCalls).toBe(2);
  });

  it("a not-found answer says when there are no tools, and lists at most 30 names", () => {
    expect(runToolTurn([], [call("wether", {})]).texts).toStrictEqual(["Tool wether not found: no tools are available."]);
    const many = Array.from({ length: 32 }, (_, index) => defineTool({ name: `tool_${index}`, description: "", parameters: Type.Object({}), execute: () => textResult("") }));
    const names = many.slice(0, 30).map((tool) => tool.name).join(", ");
    expect(runToolTurn(many, [call("wether", {})]).texts).toStrictEqual([`Tool wether not found. Available tools: ${names} and 2 more.`]);
  });

  it("a call the model sent without a name (settled to \"\") is answered that it names no tool", () => {
    const { tool } = addTool();
    expect(runToolTurn([tool], [call("", {})]).texts).toStrictEqual(["The call names no tool. Available tools: add."]);
  });

  it("answers arguments that arrive as text that is not JSON, or as a non-object, with an error result", () => {
    const { tool, received } = addTool();
    const turn = runToolTurn([tool], [call("add", "{a: 1" as never), call("add", 42 as never), call("add", '{"a":1,"b":"2"}' as never)]);
    expect(turn.texts[0]).toMatch(/^Invalid arguments for tool "add": not valid JSON \(.+\)\. Received: \{a: 1$/);
    expect(turn.texts[1]).toBe('Invalid arguments for tool "add": expected a JSON object, received a number (42).');
    expect(turn.texts[2]).toBe("3");
    expect(turn.results.map((result) => result.isError)).toStrictEqual([true, true, false]);
    expect(received).toStrictEqual([{ a: 1, b: 2, round: false }]);
  });

  it("answers schema failures with every failing path", () => {
    const { tool, received } = addTool();
    const turn = runToolTurn([tool], [call("add", { a: "one", round: "maybe" })]);
    expect(turn.texts).toStrictEqual([
      [
        'Invalid arguments for tool "add":',
        "  - /b: Expected required property; Expected number (missing)",
        '  - /a: Expected number (received "one")',
        '  - /round: Expected boolean (received "maybe")',
        'Received arguments: {"a":"one","round":"maybe"}',
      ].join("\n"),
    ]);
    expect(received).toHaveLength(0);
  });

  it('runs the tool with coerced arguments ("42" -> 42, "true" -> true, defaults filled)', () => {
    const { tool, received } = addTool();
    const turn = runToolTurn([tool], [call("add", { a: "40", b: 2 }), call("add", { a: 1, b: "2", round: "true" })]);
    expect(turn.texts).toStrictEqual(["42", "3"]);
    expect(received).toStrictEqual([{ a: 40, b: 2, round: false }, { a: 1, b: 2, round: true }]);
    expect(turn.events.find((event) => event.type === "tool_execution_start")).toMatchObject({ args: { a: "40", b: 2 } });
  });

  it("answers properties that additionalProperties: false forbids", () => {
    const strict = defineTool({
      name: "strict",
      description: "s",
      parameters: Type.Object({ path: Type.String() }, { additionalProperties: false }),
      execute: () => textResult("ran"),
    });
    const turn = runToolTurn([strict], [call("strict", { path: "a", force: true })]);
    expect(turn.texts).toStrictEqual([
      'Invalid arguments for tool "strict":\n  - /force: Unexpected property (received true)\nReceived arguments: {"path":"a","force":true}',
    ]);
  });

  it("reshapes arguments with prepareArguments, and answers a throwing one with an error result", () => {
    const legacy = defineTool({
      name: "legacy",
      description: "l",
      parameters: Type.Object({ path: Type.String() }),
      prepareArguments: (raw) => {
        const args = raw as { file?: string; path?: string };
        if (args.file === "boom") throw new Error("cannot reshape");
        return args.file === undefined ? args : { path: args.file };
      },
      execute: (_id, { path }) => textResult(path),
    });
    const turn = runToolTurn([legacy], [call("legacy", { file: "a.txt" }), call("legacy", { file: "boom" })]);
    expect(turn.texts).toStrictEqual(["a.txt", 'prepareArguments failed for tool "legacy": cannot reshape']);
  });

  // An async prepareArguments's Promise was validated as the arguments, and its rejection ended the process.
  it("answers a prepareArguments that returns a Promise with an error result, and handles its rejection", () => {
    const { thenable, handled } = watchedRejection();
    const legacy = defineTool({ name: "legacy", description: "l", parameters: Type.Object({ path: Type.String() }), prepareArguments: () => thenable, execute: (_id, { path }) => textResult(path) });
    const turn = runToolTurn([legacy], [call("legacy", { path: "a.txt" })]);
    expect(turn.texts).toStrictEqual(['prepareArguments failed for tool "legacy": it returned a Promise, and it must answer synchronously']);
    expect(handled()).toBe(true);
  });

  describe("beforeToolCall", () => {
    it("blocks a call with its reason, or a default text, and gets the validated arguments", () => {
      const { tool, received } = addTool();
      const seen: unknown[] = [];
      const turn = runToolTurn([tool], [call("add", { a: "1", b: 1 }), call("add", { a: 2, b: 2 }), call("add", { a: 3, b: 3 })], {
        beforeToolCall: ({ args, toolCall, assistantMessage, context }, signal) => {
          seen.push(args);
          expect(assistantMessage.content).toContain(toolCall);
          expect(context.messages.at(-1)).toBe(assistantMessage);
          expect(signal.aborted).toBe(false);
          const a = (args as { a: number }).a;
          return a === 1 ? { block: true, reason: "Not allowed: a is 1" } : a === 2 ? { block: true } : undefined;
        },
      });
      expect(turn.texts).toStrictEqual(["Not allowed: a is 1", "Tool execution was blocked", "6"]);
      expect(turn.results.map((result) => result.isError)).toStrictEqual([true, true, false]);
      expect(seen).toStrictEqual([{ a: 1, b: 1, round: false }, { a: 2, b: 2, round: false }, { a: 3, b: 3, round: false }]);
      expect(received).toStrictEqual([{ a: 3, b: 3, round: false }]);
    });

    it("answers a throwing beforeToolCall with an error result and does not run the tool", () => {
      const { tool, received } = addTool();
      const turn = runToolTurn([tool], [call("add", { a: 1, b: 1 })], {
        beforeToolCall: () => {
          throw new Error("policy down");
        },
      });
      expect(turn.texts).toStrictEqual(['beforeToolCall failed for tool "add": policy down']);
      expect(received).toHaveLength(0);
    });

    // The reason went into the result's text as it was: an object where every provider and
    // client reads a string.
    it("writes a block's reason that is not a text as one: an Error's message, a number's digits", () => {
      const { tool, received } = addTool();
      const turn = runToolTurn([tool], [call("add", { a: 1, b: 1 }), call("add", { a: 2, b: 2 })], {
        beforeToolCall: ({ args }) => ({ block: true, reason: ((args as { a: number }).a === 1 ? new Error("outside office hours") : 42) as never }),
      });
      expect(turn.texts).toStrictEqual(["outside office hours", "42"]);
      expect(received).toHaveLength(0);
    });

    // Reading `block` threw out of the hook's answer, and the run failed.
    it("fails the call, which does not run, when the decision cannot be read", () => {
      const { tool, received } = addTool();
      const turn = runToolTurn([tool], [call("add", { a: 1, b: 1 })], {
        beforeToolCall: () => throwingGetter("block", "policy store gone") as never,
      });
      expect(turn.texts).toStrictEqual(['beforeToolCall failed for tool "add": its answer could not be read: policy store gone']);
      expect([turn.results[0]!.isError, received.length, turn.modelCalls]).toStrictEqual([true, 0, 2]);
    });

    it("prepares call after call whose Observable decision answers synchronously at one stack depth", () => {
      const { tool, received } = addTool();
      const count = 600;
      const depths = new Set<number>();
      const traceLimit = Error.stackTraceLimit;
      Error.stackTraceLimit = Infinity;
      let turn;
      try {
        turn = runToolTurn(
          [tool],
          Array.from({ length: count }, (_, index) => call("add", { a: index, b: 0 })),
          {
            beforeToolCall: ({ args }) => {
              if ((args as { a: number }).a % 100 === 0) depths.add(new Error().stack!.split("\n").length);
              return of(undefined);
            },
          },
        );
      } finally {
        Error.stackTraceLimit = traceLimit;
      }
      expect([turn.results.length, received.length, depths.size]).toStrictEqual([count, count, 1]);
    });

    it("waits for a Promise (real async) or an Observable decision", async () => {
      const { tool } = addTool();
      const promised = await runToolTurnAsync([tool], [call("add", { a: 1, b: 1 }), call("add", { a: 2, b: 2 })], {
        beforeToolCall: async ({ args }) => ((args as { a: number }).a === 1 ? { block: true, reason: "later" } : undefined),
      });
      expect(promised.texts).toStrictEqual(["later", "4"]);
      const observed = await runToolTurnAsync([tool], [call("add", { a: 1, b: 1 })], {
        beforeToolCall: () => of({ block: true, reason: "observed" }).pipe(delay(1)),
      });
      expect(observed.texts).toStrictEqual(["observed"]);
    });
  });
});

describe("prepareToolCalls", () => {
  it("emits each call's tool_execution_start, then the call prepared or finalized, in source order, on its own stream", () => {
    const { tool } = addTool();
    const toolCalls = [toolCall("c1", "add", { a: 1, b: 2 }), toolCall("c2", "nope", {}), toolCall("c3", "add", { a: 3, b: 4 })];
    const batch: ToolBatch = {
      assistantMessage: { role: "assistant", content: toolCalls, api: "t", provider: "t", model: "t", usage: emptyUsage(), stopReason: "toolUse", timestamp: 0 },
      context: { systemPrompt: "", messages: [], tools: [tool] },
      config: { model: { id: "t", provider: "t", api: "t", stream: () => EMPTY } },
      scheduler: asyncScheduler,
      cancellation: new LazyAbortController(),
      interruption: new BatchInterruption(),
      deadlinesOwner: {},
    };
    const seen: string[] = [];
    prepareToolCalls(toolCalls, batch).subscribe((output) => {
      if (output instanceof PreparedToolCall) seen.push(`prepared ${output.toolCall.id} ${JSON.stringify(output.args)}`);
      else if (output instanceof FinalizedToolCall) seen.push(`finalized ${output.toolCall.id} ${output.isError}`);
      else seen.push(`${output.type} ${"toolCallId" in output ? output.toolCallId : ""}`);
    });
    expect(seen).toStrictEqual([
      "tool_execution_start c1",
      'prepared c1 {"a":1,"b":2,"round":false}',
      "tool_execution_start c2",
      "finalized c2 true",
      "tool_execution_start c3",
      'prepared c3 {"a":3,"b":4,"round":false}',
    ]);
  });
});
