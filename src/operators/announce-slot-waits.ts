import { Observable, type OperatorFunction, type SchedulerLike } from "rxjs";
import type { AgentEvent } from "../types.js";
import type { FinalizedToolCall, PreparedToolCall } from "./tool-batch.js";

/** What `announceSlotWaits` tells of, and asks. */
export interface SlotWaits {
  readonly scheduler: SchedulerLike;
  readonly passOn: (event: AgentEvent | FinalizedToolCall) => void;
  /** Whether the call has its result already (cancelled while it waited). */
  readonly isSettled: (index: number) => boolean;
}

/**
 * Wraps a fan-out of prepared calls (`mergeMap(project, limit)`, `mergeMapCapped`) so that a
 * call that has to wait for a concurrency slot says so: `tool_slot_wait_start` as it arrives and
 * is not started at once, `tool_slot_wait_end` as it gets its slot, just before it runs. A call
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
export function announceSlotWaits<R>(
  fanOut: (project: (prepared: PreparedToolCall) => Observable<R>) => OperatorFunction<PreparedToolCall, R>,
  project: (prepared: PreparedToolCall) => Observable<R>,
  { scheduler, passOn, isSettled }: SlotWaits,
): OperatorFunction<PreparedToolCall, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      let arriving: PreparedToolCall | undefined;
      const waiting = new Set<PreparedToolCall>();
      const start = (prepared: PreparedToolCall): Observable<R> => {
        if (arriving === prepared) arriving = undefined;
        else if (waiting.delete(prepared) && !isSettled(prepared.index)) {
          passOn({ type: "tool_slot_wait_end", toolCallId: prepared.toolCall.id, toolName: prepared.toolCall.name });
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
            passOn({ type: "tool_slot_wait_start", toolCallId: prepared.toolCall.id, toolName: prepared.toolCall.name, since: scheduler.now() });
          },
          error: (error: unknown) => arrivals.error(error),
          complete: () => arrivals.complete(),
        }),
      );
      return announced.pipe(fanOut(start)).subscribe(subscriber);
    });
}
