import { EMPTY, Observable, of, type OperatorFunction, type SchedulerLike } from "rxjs";
import type { Cancellation } from "../../util/lazy-abort-controller.js";
import { errorResult } from "../../tools/tool-results.js";
import type { AgentEvent } from "../../types.js";
import { ABORTED_TOOL_TEXT, FinalizedToolCall, type PreparedToolCall } from "./tool-batch.js";

/** What running one call emits (`runToolCall`). */
type CallOutput = AgentEvent | FinalizedToolCall;

/** What `announceSlotWaits` asks. */
export interface SlotWaits {
  readonly scheduler: SchedulerLike;
  /** The run's abort: torn down or aborted, no tool code may run any more. */
  readonly cancellation: Cancellation;
  /** Whether the call has its result already (cancelled while it waited). */
  readonly isSettled: (index: number) => boolean;
}

/**
 * Wraps a fan-out of prepared calls (`mergeMap(project, limit)`, `mergeMapCapped`) so that a
 * call that has to wait for a concurrency slot says so on the fan-out's stream:
 * `tool_slot_wait_start` as it arrives and is not started at once, `tool_slot_wait_end` as it
 * gets its slot, just before it runs. A call
 * settled while it waits (a cancel) gets no `tool_slot_wait_end`: its `tool_execution_end`
 * ends the wait.
 *
 * How it knows: a fan-out starts a call that has room synchronously, inside the `next` that
 * brings it; a call that is still not started when that `next` returns waits.
 *
 * ```text
 * limit 1:   a ──────────|               a runs at once: no events
 *            b    wait_start(b)  wait_end(b) ── b runs ──|
 * ```
 */
export function announceSlotWaits(
  fanOut: (project: (prepared: PreparedToolCall) => Observable<CallOutput>) => OperatorFunction<PreparedToolCall, CallOutput>,
  project: (prepared: PreparedToolCall) => Observable<CallOutput>,
  { scheduler, cancellation, isSettled }: SlotWaits,
): OperatorFunction<PreparedToolCall, CallOutput> {
  return (source) =>
    new Observable<CallOutput>((subscriber) => {
      let arriving: PreparedToolCall | undefined;
      const waiting = new Set<PreparedToolCall>();
      const start = (prepared: PreparedToolCall): Observable<CallOutput> => {
        if (arriving === prepared) arriving = undefined;
        else if (waiting.delete(prepared) && !isSettled(prepared.index)) {
          subscriber.next({ type: "tool_slot_wait_end", toolCallId: prepared.toolCall.id, toolName: prepared.toolCall.name });
          // A listener may leave or abort as it hears that, and the fan-out subscribes to what this
          // returns all the same: a run torn down or aborted (its cancellation, set also before its
          // subscriptions are linked) must not start a tool; an aborted call gets its result.
          if (subscriber.closed) return EMPTY;
          if (cancellation.aborted) return of(new FinalizedToolCall(prepared.index, prepared.toolCall, errorResult(ABORTED_TOOL_TEXT), true, true));
        }
        return project(prepared);
      };
      const announced = new Observable<PreparedToolCall>((arrivals) =>
        source.subscribe({
          next: (prepared) => {
            arriving = prepared;
            arrivals.next(prepared);
            if (arriving !== prepared) return;
            arriving = undefined;
            waiting.add(prepared);
            subscriber.next({ type: "tool_slot_wait_start", toolCallId: prepared.toolCall.id, toolName: prepared.toolCall.name, since: scheduler.now() });
          },
          error: (error: unknown) => arrivals.error(error),
          complete: () => arrivals.complete(),
        }),
      );
      return announced.pipe(fanOut(start)).subscribe(subscriber);
    });
}
