import { Type } from "@sinclair/typebox";
import { filter, mergeMap, type Observable, type Subscription } from "rxjs";
import { describe, expect, it } from "vitest";
import { mergeMapCapped } from "../../../src/operators/merge-map-capped.js";
import { announceSlotWaits } from "../../../src/operators/tool-calls/announce-slot-waits.js";
import { ABORTED_TOOL_TEXT, FinalizedToolCall, PreparedToolCall } from "../../../src/operators/tool-calls/tool-batch.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { errorResult, textResult } from "../../../src/tools/tool-results.js";
import type { AgentEvent } from "../../../src/types.js";
import { LazyAbortController } from "../../../src/util/lazy-abort-controller.js";
import { marbles } from "../../helpers/marbles.js";
import { toolCall } from "../../testing/fixtures.js";

type CallOutput = AgentEvent | FinalizedToolCall;

const tool = defineTool({ name: "t", description: "t", parameters: Type.Object({}), execute: () => textResult("unused") });
const calls = { a: new PreparedToolCall(0, toolCall("a", "t"), tool, {}), b: new PreparedToolCall(1, toolCall("b", "t"), tool, {}), c: new PreparedToolCall(2, toolCall("c", "t"), tool, {}) };
const finished = (prepared: PreparedToolCall) => new FinalizedToolCall(prepared.index, prepared.toolCall, textResult(prepared.toolCall.id), false);
const results = { x: finished(calls.a), y: finished(calls.b), z: finished(calls.c) };

/** The events on the fan-out's stream, as "frame type id" in `heard`; `calls` lets only the finalized calls through, for the marbles. */
function listen(now: () => number) {
  const heard: string[] = [];
  const calls = filter((output: CallOutput): output is FinalizedToolCall => {
    if (output instanceof FinalizedToolCall) return true;
    if ("toolCallId" in output) heard.push(`${now()} ${output.type} ${output.toolCallId}`);
    return false;
  });
  return { heard, calls };
}

const limitOf = (limit: number) => (project: (prepared: PreparedToolCall) => Observable<CallOutput>) => mergeMap(project, limit);

describe("announceSlotWaits", () => {
  it(
    "says when a call waits for a slot and when it gets it, and nothing for a call that starts at once",
    marbles((m) => {
      const source = m.cold("(ab|)", calls);
      const runs: Record<string, Observable<CallOutput>> = { a: m.cold("3ms x|", results), b: m.cold("2ms y|", results) };
      const { heard, calls: finalizedOnly } = listen(() => m.scheduler.now());
      const waits = { scheduler: m.scheduler, cancellation: new LazyAbortController(), isSettled: () => false };
      //  a  ^---!           limit 1: runs at once
      //  b  ----^--!        waits from frame 0, gets a's slot at frame 4
      m.expect(source.pipe(announceSlotWaits(limitOf(1), (prepared) => runs[prepared.toolCall.id]!, waits), finalizedOnly)).toBeObservable("3ms x 2ms y|", results);
      m.expect(source).toHaveSubscriptions("(^!)");
      m.expect(runs.a!).toHaveSubscriptions("^ 3ms !");
      m.expect(runs.b!).toHaveSubscriptions("4ms ^ 2ms !");
      m.flush();
      expect(heard).toStrictEqual(["0 tool_slot_wait_start b", "4 tool_slot_wait_end b"]);
    }),
  );

  it(
    "says nothing while the limit has room",
    marbles((m) => {
      const source = m.cold("(ab|)", calls);
      const runs: Record<string, Observable<CallOutput>> = { a: m.cold("3ms x|", results), b: m.cold("2ms y|", results) };
      const { heard, calls: finalizedOnly } = listen(() => m.scheduler.now());
      const waits = { scheduler: m.scheduler, cancellation: new LazyAbortController(), isSettled: () => false };
      m.expect(source.pipe(announceSlotWaits(limitOf(2), (prepared) => runs[prepared.toolCall.id]!, waits), finalizedOnly)).toBeObservable("2ms y x|", results);
      m.flush();
      expect(heard).toStrictEqual([]);
    }),
  );

  it(
    "tells of a call waiting for its tool's cap under mergeMapCapped, while a call of no cap runs",
    marbles((m) => {
      const source = m.cold("(abc|)", calls);
      const runs: Record<string, Observable<CallOutput>> = { a: m.cold("3ms x|", results), b: m.cold("2ms y|", results), c: m.cold("1ms z|", results) };
      const { heard, calls: finalizedOnly } = listen(() => m.scheduler.now());
      const waits = { scheduler: m.scheduler, cancellation: new LazyAbortController(), isSettled: () => false };
      const capOf = (prepared: PreparedToolCall) => (prepared.toolCall.id === "c" ? undefined : { key: "t", cap: 1 });
      const fanOut = (project: (prepared: PreparedToolCall) => Observable<CallOutput>) => mergeMapCapped(project, 10, capOf);
      m.expect(source.pipe(announceSlotWaits(fanOut, (prepared) => runs[prepared.toolCall.id]!, waits), finalizedOnly)).toBeObservable("1ms z 1ms x 2ms y|", results);
      m.expect(runs.c!).toHaveSubscriptions("^ 1ms !");
      m.flush();
      expect(heard).toStrictEqual(["0 tool_slot_wait_start b", "4 tool_slot_wait_end b"]);
    }),
  );

  it(
    "says no wait_end for a call settled while it waited (its tool_execution_end ends the wait)",
    marbles((m) => {
      const source = m.cold("(ab|)", calls);
      const runs: Record<string, Observable<CallOutput>> = { a: m.cold("3ms x|", results), b: m.cold("(y|)", results) };
      const { heard, calls: finalizedOnly } = listen(() => m.scheduler.now());
      const waits = { scheduler: m.scheduler, cancellation: new LazyAbortController(), isSettled: (index: number) => index === 1 };
      m.expect(source.pipe(announceSlotWaits(limitOf(1), (prepared) => runs[prepared.toolCall.id]!, waits), finalizedOnly)).toBeObservable("3ms x (y|)", results);
      m.flush();
      expect(heard).toStrictEqual(["0 tool_slot_wait_start b"]);
    }),
  );

  it(
    "gives a call whose slot comes after the run was aborted the aborted result, and never runs it",
    marbles((m) => {
      const source = m.cold("(ab|)", calls);
      const runs: Record<string, Observable<CallOutput>> = { a: m.cold("3ms x|", results), b: m.cold("2ms y|", results) };
      const { heard, calls: finalizedOnly } = listen(() => m.scheduler.now());
      const cancellation = new LazyAbortController();
      m.scheduler.schedule(() => cancellation.abort(new Error("stop")), 2);
      const waits = { scheduler: m.scheduler, cancellation, isSettled: () => false };
      const aborted = { f: new FinalizedToolCall(1, calls.b.toolCall, errorResult(ABORTED_TOOL_TEXT), true, true) };
      m.expect(source.pipe(announceSlotWaits(limitOf(1), (prepared) => runs[prepared.toolCall.id]!, waits), finalizedOnly)).toBeObservable("3ms x (f|)", { ...results, ...aborted });
      m.expect(runs.b!).toHaveSubscriptions([]);
      m.flush();
      expect(heard).toStrictEqual(["0 tool_slot_wait_start b", "4 tool_slot_wait_end b"]);
    }),
  );

  it(
    "starts nothing for a listener that leaves as it hears wait_end",
    marbles((m) => {
      const source = m.cold("(ab|)", calls);
      const runs: Record<string, Observable<CallOutput>> = { a: m.cold("3ms x|", results), b: m.cold("2ms y|", results) };
      const heard: string[] = [];
      let subscription: Subscription | undefined;
      const waits = { scheduler: m.scheduler, cancellation: new LazyAbortController(), isSettled: () => false };
      const seen: CallOutput[] = [];
      subscription = source.pipe(announceSlotWaits(limitOf(1), (prepared) => runs[prepared.toolCall.id]!, waits)).subscribe((output) => {
        if (output instanceof FinalizedToolCall) {
          seen.push(output);
          return;
        }
        heard.push(output.type);
        if (output.type === "tool_slot_wait_end") subscription!.unsubscribe();
      });
      m.expect(runs.b!).toHaveSubscriptions([]);
      m.flush();
      expect(heard).toStrictEqual(["tool_slot_wait_start", "tool_slot_wait_end"]);
      expect(seen).toStrictEqual([results.x]);
    }),
  );

  it(
    "passes the source's error on and tears the running call down",
    marbles((m) => {
      const source = m.cold("a 1ms #", calls);
      const runs: Record<string, Observable<CallOutput>> = { a: m.cold("9ms x|", results) };
      const { calls: finalizedOnly } = listen(() => m.scheduler.now());
      const waits = { scheduler: m.scheduler, cancellation: new LazyAbortController(), isSettled: () => false };
      m.expect(source.pipe(announceSlotWaits(limitOf(1), (prepared) => runs[prepared.toolCall.id]!, waits), finalizedOnly)).toBeObservable("2ms #", results);
      m.expect(runs.a!).toHaveSubscriptions("^ 1ms !");
    }),
  );
});
