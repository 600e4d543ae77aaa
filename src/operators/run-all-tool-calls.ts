import { Observable, type OperatorFunction, type Subscriber } from "rxjs";
import type { AgentEvent } from "../types.js";
import { forwardingObserver } from "./forwarding-observer.js";
import { type CallOutput, startToolCall, type ToolExecution } from "./run-tool-call.js";
import type { FinalizedToolCall, PreparedToolCall, ToolBatch } from "./tool-batch.js";

/**
 * Runs every prepared call as soon as it comes, with no limit, and emits what the calls emit
 * (progress, then each call's `FinalizedToolCall`); completes once the source has completed and
 * every call has ended. Unsubscribing stops every call still running. For a batch without
 * `afterToolCall` this is `mergeMap((prepared) => runToolCall(prepared, batch))`.
 *
 * Why by hand: per call, `mergeMap` made the call's Observable, an inner subscriber with its
 * closures and list of finalizers, and removed that subscriber from its parent's list (an array
 * search) as the call ended; here a running call is its `ToolExecution`, kept in a Set. Bench
 * W2 (200 turns x 8 calls) runs through it; the figures are in the commit that made it.
 */
export function runAllToolCalls(batch: ToolBatch): OperatorFunction<PreparedToolCall, AgentEvent | FinalizedToolCall> {
  return (prepared$) =>
    new Observable<AgentEvent | FinalizedToolCall>((subscriber) => {
      const calls = new RunningCalls(subscriber);
      const source = prepared$.subscribe(
        forwardingObserver(subscriber, {
          next: (prepared: PreparedToolCall) => calls.start(startToolCall(prepared, batch, calls)),
          complete: () => calls.sourceCompleted(),
        }),
      );
      return () => {
        source.unsubscribe();
        calls.tearDown();
      };
    });
}

/**
 * The calls of one fan-out that have not ended, and the output they all report to.
 *
 * Why a class and not an object literal with closures: with the literal, each scavenge of W2
 * with value tools promoted 3 MB instead of 86 KB and took 20 to 50 ms instead of 2 ms
 * (`--trace-gc-nvp`, 2026-12-01); most likely V8 pretenured the literal (its objects outlive a
 * scavenge while a batch waits for a Promise tool), and each old copy kept its young closures'
 * scope, the batch's subscriber chain, alive through every scavenge. A class instance is not
 * pretenured (see tool-result-message.ts).
 */
class RunningCalls implements CallOutput {
  private readonly running = new Set<ToolExecution>();
  private sourceDone = false;

  constructor(private readonly subscriber: Subscriber<AgentEvent | FinalizedToolCall>) {}

  get closed(): boolean {
    return this.subscriber.closed;
  }

  next(output: AgentEvent | FinalizedToolCall): void {
    // As an operator's inner subscriber does: a throw downstream ends the batch with it.
    try {
      this.subscriber.next(output);
    } catch (error) {
      this.subscriber.error(error);
    }
  }

  complete(execution?: ToolExecution): void {
    if (execution) {
      this.running.delete(execution);
      execution.tearDown();
    }
    if (this.sourceDone && this.running.size === 0) this.subscriber.complete();
  }

  /** Keeps a started call until it ends; one that ended as it started needs nothing. */
  start(execution: ToolExecution | undefined): void {
    if (execution === undefined || execution.settled) return;
    // Torn down while it started (a listener that left as it heard the call's progress):
    // released at once, as rxjs does with a teardown returned to a closed subscriber.
    if (this.subscriber.closed) execution.tearDown();
    else this.running.add(execution);
  }

  sourceCompleted(): void {
    this.sourceDone = true;
    if (this.running.size === 0) this.subscriber.complete();
  }

  tearDown(): void {
    for (const execution of this.running) execution.tearDown();
    this.running.clear();
  }
}
