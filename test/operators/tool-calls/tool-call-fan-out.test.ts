import { Type } from "@sinclair/typebox";
import { firstValueFrom, mergeMap, of, ReplaySubject, type SchedulerLike, Subscriber } from "rxjs";
import { describe, expect, it } from "vitest";
import { runToolCall } from "../../../src/operators/tool-calls/run-tool-call.js";
import { BatchInterruption, FinalizedToolCall, PreparedToolCall, type ToolBatch } from "../../../src/operators/tool-calls/tool-batch.js";
import { LazyAbortController } from "../../../src/util/lazy-abort-controller.js";
import { scriptedModel } from "../../../src/testing/scripted-model.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { textResult } from "../../../src/tools/tool-results.js";
import type { AgentEvent, AgentTool, AgentToolResult, ToolExecutionContext } from "../../../src/types.js";
import { marbles } from "../../helpers/marbles.js";
import { assistantMessage, toolCall } from "../../testing/fixtures.js";

type Output = AgentEvent | FinalizedToolCall;

function batchOf(scheduler: SchedulerLike, tool: AgentTool): ToolBatch {
  return {
    assistantMessage: assistantMessage([]),
    context: { messages: [], tools: [tool] },
    config: { model: scriptedModel([]) },
    scheduler,
    cancellation: new LazyAbortController(),
    interruption: new BatchInterruption(),
    deadlinesOwner: {},
  };
}

function prepared(index: number, id: string, tool: AgentTool): PreparedToolCall {
  return new PreparedToolCall(index, toolCall(id, tool.name), tool, {});
}

// The batch's fan-out is `mergeMap((prepared) => runToolCall(prepared, batch))`: what a listener
// downstream of it does must not leave a call running or a throw unheard.
describe("the tool calls' fan-out (mergeMap over runToolCall)", () => {
  it(
    "a listener that leaves as a call reports progress while it starts: the call is torn down at once (its signal fires, its output is unsubscribed)",
    marbles((m) => {
      const body = m.cold<AgentToolResult>("10ms (r|)", { r: textResult("late") });
      let context: ToolExecutionContext | undefined;
      // Recorded here and asserted after the flush: a throw inside `execute` would only become the
      // call's error result.
      let abortedAtStart: boolean | undefined;
      const tool = defineTool({
        name: "chatty",
        description: "c",
        parameters: Type.Object({}),
        execute: (_id, _args, execution) => {
          context = execution;
          abortedAtStart = execution.signal.aborted;
          execution.update(textResult("starting"));
          return body;
        },
      });
      const batch = batchOf(m.scheduler, tool);
      const seen: string[] = [];
      const listener: Subscriber<Output> = new Subscriber<Output>({
        next: (output) => {
          seen.push(output instanceof FinalizedToolCall ? "finalized" : output.type);
          listener.unsubscribe();
        },
        error: () => undefined,
        complete: () => undefined,
      });
      m.cold("-a|", { a: prepared(0, "a", tool) })
        .pipe(mergeMap((call) => runToolCall(call, batch)))
        .subscribe(listener);
      m.expect(body).toHaveSubscriptions("-(^!)");
      m.flush();
      expect(seen).toStrictEqual(["tool_execution_update"]);
      expect(abortedAtStart).toBe(false);
      expect(context!.signal.aborted).toBe(true);
    }),
  );

  it("a throw downstream of a Promise call's result ends the fan-out with that error", async () => {
    const tool = defineTool({ name: "later", description: "l", parameters: Type.Object({}), execute: () => Promise.resolve(textResult("ok")) });
    const errors = new ReplaySubject<unknown>();
    const failing = new Subscriber<Output>({
      next: () => {
        throw new Error("listener broke");
      },
      error: (error: unknown) => errors.next(error),
      complete: () => undefined,
    });
    const scheduler: SchedulerLike = {
      now: () => 0,
      schedule: () => {
        throw new Error("no timer expected");
      },
    };
    // No time limit, so no timer: the scheduler only tells the time.
    const batch = { ...batchOf(scheduler, tool), config: { model: scriptedModel([]), toolTimeoutMs: 0 } };
    of(prepared(0, "a", tool))
      .pipe(mergeMap((call) => runToolCall(call, batch)))
      .subscribe(failing);
    // Waits for the error itself, however many microtasks the Promise takes to get there.
    expect(String(await firstValueFrom(errors))).toBe("Error: listener broke");
  });
});
