import { Type } from "@sinclair/typebox";
import { of, type SchedulerLike, Subscriber } from "rxjs";
import { describe, expect, it } from "vitest";
import { runAllToolCalls } from "../../src/operators/run-all-tool-calls.js";
import { BatchInterruption, FinalizedToolCall, PreparedToolCall, type ToolBatch } from "../../src/operators/tool-batch.js";
import { ToolDeadlines } from "../../src/operators/tool-deadlines.js";
import { LazyAbortController } from "../../src/streams/lazy-abort-controller.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentTool, AgentToolResult, ToolExecutionContext } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";
import { timeline } from "../helpers/timeline.js";
import { assistantMessage, toolCall } from "../testing/fixtures.js";

type Output = AgentEvent | FinalizedToolCall;

function batchOf(scheduler: SchedulerLike, tool: AgentTool): ToolBatch {
  return {
    assistantMessage: assistantMessage([]),
    context: { messages: [], tools: [tool] },
    config: { model: scriptedModel([]) },
    scheduler,
    cancellation: new LazyAbortController(),
    interruption: new BatchInterruption(),
    deadlines: new ToolDeadlines(scheduler),
  };
}

function prepared(index: number, id: string, tool: AgentTool): PreparedToolCall {
  return new PreparedToolCall(index, toolCall(id, tool.name), tool, {});
}

describe("runAllToolCalls", () => {
  it(
    "runs each call as it comes and completes once the source has and every call has ended",
    marbles((m) => {
      const bodies: Record<string, string> = { a: "20ms (r|)", b: "5ms (r|)" };
      const tool = defineTool({
        name: "work",
        description: "w",
        parameters: Type.Object({}),
        execute: (id) => m.cold<AgentToolResult>(bodies[id]!, { r: textResult(id) }),
      });
      const [a, b] = [prepared(0, "a", tool), prepared(1, "b", tool)];
      // a starts at 0 and ends at 20; b starts at 3 and ends at 8; the source completes at 10.
      const source = m.cold("a 2ms b 6ms |", { a, b });
      const output = source.pipe(runAllToolCalls(batchOf(m.scheduler, tool)));
      m.expect(output).toBeObservable(
        ...timeline<Output>({
          8: [new FinalizedToolCall(1, b.toolCall, textResult("b"), false)],
          20: [new FinalizedToolCall(0, a.toolCall, textResult("a"), false)],
        }),
      );
    }),
  );

  it(
    "a listener that leaves as a call reports progress while it starts: the call is torn down at once (its signal fires, its output is unsubscribed)",
    marbles((m) => {
      const body = m.cold<AgentToolResult>("10ms (r|)", { r: textResult("late") });
      let context: ToolExecutionContext | undefined;
      const tool = defineTool({
        name: "chatty",
        description: "c",
        parameters: Type.Object({}),
        execute: (_id, _args, execution) => {
          context = execution;
          const signal = execution.signal;
          execution.update(textResult("starting"));
          expect(signal.aborted).toBe(false);
          return body;
        },
      });
      const seen: string[] = [];
      const listener: Subscriber<Output> = new Subscriber<Output>({
        next: (output) => {
          seen.push(output instanceof FinalizedToolCall ? "finalized" : output.type);
          listener.unsubscribe();
        },
        error: () => undefined,
        complete: () => undefined,
      });
      // The call comes at frame 1, after the fan-out's teardown is in place.
      m.cold("-a|", { a: prepared(0, "a", tool) }).pipe(runAllToolCalls(batchOf(m.scheduler, tool))).subscribe(listener);
      m.expect(body).toHaveSubscriptions("-(^!)");
      m.flush();
      expect(seen).toStrictEqual(["tool_execution_update"]);
      expect(context!.signal.aborted).toBe(true);
    }),
  );

  it("a throw downstream of a Promise call's result ends the fan-out with that error", async () => {
    const tool = defineTool({ name: "later", description: "l", parameters: Type.Object({}), execute: () => Promise.resolve(textResult("ok")) });
    const errors: unknown[] = [];
    const failing = new Subscriber<Output>({
      next: () => {
        throw new Error("listener broke");
      },
      error: (error: unknown) => errors.push(error),
      complete: () => undefined,
    });
    const scheduler: SchedulerLike = { now: () => 0, schedule: () => { throw new Error("no timer expected"); } };
    of(prepared(0, "a", tool))
      // No time limit, so no timer: the scheduler only tells the time.
      .pipe(runAllToolCalls({ ...batchOf(scheduler, tool), config: { model: scriptedModel([]), toolTimeoutMs: 0 } }))
      .subscribe(failing);
    await Promise.resolve();
    await Promise.resolve();
    expect(errors.map(String)).toStrictEqual(["Error: listener broke"]);
  });
});
