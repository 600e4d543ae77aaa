import { Type } from "@sinclair/typebox";
import { lastValueFrom, of, throwError, timeout, toArray } from "rxjs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentLoop } from "../../../src/streams/agent-loop.js";
import { scriptedModel } from "../../../src/testing/scripted-model.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { textResult } from "../../../src/tools/tool-results.js";
import type { AgentEvent, AgentTool, AgentToolResult, ToolExecuteResult, ToolExecutionContext } from "../../../src/types.js";
import { UNREADABLE_ERROR_TEXT } from "../../../src/util/error-text.js";
import { hostileProxy, throwingGetter } from "../../helpers/unreadable-values.js";
import { userMessage } from "../../testing/fixtures.js";

/**
 * What a tool hands the loop may throw as it is read (getters, a Proxy's traps, a thrown value
 * whose `toString` throws). Each case below ended the whole run, never ended it, or threw inside
 * a rejection handler (an unhandled rejection, which ends a Node process) before its fix: now
 * the call gets an error result that says so, and the run goes on to ask the model again.
 */
describe("a tool's values that cannot be read", () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on("unhandledRejection", onUnhandled);
  });
  afterEach(() => {
    process.off("unhandledRejection", onUnhandled);
  });

  /** Runs one call of a tool executing `execute`, then a closing reply; the call's result text, the run's model calls and its unhandled rejections. */
  async function runCall(execute: (context: ToolExecutionContext) => ToolExecuteResult) {
    const tool = defineTool({ name: "t", description: "t", parameters: Type.Object({}), execute: (_id, _args, context) => execute(context) }) as AgentTool;
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "c1", name: "t", arguments: {} }] }, "done"]);
    // A run that never ends fails here, under the test's timeout; a limit that holds at a load of 8, not a margin.
    const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [tool] }, { model }).pipe(timeout(10_000), toArray()));
    // A macrotask: Node reports unhandled rejections after the microtasks have run.
    await new Promise((resolve) => setImmediate(resolve));
    const end = events.find((event): event is Extract<AgentEvent, { type: "tool_execution_end" }> => event.type === "tool_execution_end");
    const updates = events.filter((event): event is Extract<AgentEvent, { type: "tool_execution_update" }> => event.type === "tool_execution_update");
    return {
      text: end?.result.content.map((part) => (part.type === "text" ? part.text : "")).join(""),
      isError: end?.isError,
      updates: updates.map((update) => update.partialResult),
      modelCalls: model.calls.length,
      unhandled: [...unhandled],
    };
  }

  const unreadableResult = (what: string, why: string) => ({ text: `Tool "t" returned ${what} that could not be read: ${why}`, isError: true, modelCalls: 2, unhandled: [] });

  it("a returned result whose content getter throws", async () => {
    expect(await runCall(() => throwingGetter("content", "content is gone") as AgentToolResult)).toMatchObject(unreadableResult("a result", "content is gone"));
  });

  it("a returned Proxy whose traps throw", async () => {
    expect(await runCall(() => hostileProxy() as AgentToolResult)).toMatchObject({ text: "proxy refused getPrototypeOf", isError: true, modelCalls: 2, unhandled: [] });
  });

  it("a returned thenable whose then getter throws", async () => {
    expect(await runCall(() => throwingGetter("then", "no then") as AgentToolResult)).toMatchObject({ text: "no then", isError: true, modelCalls: 2, unhandled: [] });
  });

  it("a result whose details is a Proxy whose traps throw", async () => {
    expect(await runCall(() => ({ content: [{ type: "text", text: "ok" }], details: hostileProxy() }))).toMatchObject(unreadableResult("a result", "proxy refused ownKeys"));
  });

  it("a rejection with a value whose toString and toJSON throw", async () => {
    const unreadable = {
      toString(): string {
        throw new Error("no text");
      },
      toJSON(): string {
        throw new Error("no JSON");
      },
    };
    expect(await runCall(() => Promise.reject(unreadable))).toMatchObject({ text: UNREADABLE_ERROR_TEXT, isError: true, modelCalls: 2, unhandled: [] });
  });

  it("a rejection with an Error whose message getter throws", async () => {
    const error = new Error("x");
    Object.defineProperty(error, "message", {
      get() {
        throw new Error("message is gone");
      },
    });
    expect(await runCall(() => Promise.reject(error))).toMatchObject({ text: UNREADABLE_ERROR_TEXT, isError: true, modelCalls: 2, unhandled: [] });
  });

  it("an Observable whose last value's content getter throws", async () => {
    expect(await runCall(() => of(throwingGetter("content", "content is gone") as AgentToolResult))).toMatchObject(unreadableResult("a result", "content is gone"));
  });

  it("an Observable that errors with a Proxy whose traps throw", async () => {
    expect(await runCall(() => throwError(() => hostileProxy()))).toMatchObject({ text: UNREADABLE_ERROR_TEXT, isError: true, modelCalls: 2, unhandled: [] });
  });

  // A cyclic report went out as it was: every consumer of the event (the wire, a UI, a store)
  // reads `partialResult.content`, and JSON.stringify throws on the cycle.
  it("a progress report that is not a tool result, or cannot be read, is replaced by one that says so", async () => {
    const cyclic: Record<string, unknown> = { percent: 10 };
    cyclic.self = cyclic;
    const run = await runCall(({ update }) => {
      update(cyclic as unknown as AgentToolResult);
      update(throwingGetter("content", "content is gone") as AgentToolResult);
      update(textResult("50%"));
      return textResult("done");
    });
    expect(run).toMatchObject({ text: "done", isError: false, modelCalls: 2 });
    expect(run.updates.map((update) => update.content)).toStrictEqual([
      [{ type: "text", text: 'Tool "t" reported progress that is not a tool result ({ content: [...], details }).' }],
      [{ type: "text", text: 'Tool "t" returned a progress report that could not be read: content is gone' }],
      [{ type: "text", text: "50%" }],
    ]);
  });
});
