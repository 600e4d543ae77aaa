import type { Unsubscribable } from "rxjs";
import type { RunState } from "./run-state.js";

/**
 * What ties a run to its caller: an abort of the caller's `signal` aborts the run, and leaving
 * before `agent_end` aborts it too (hooks and tools see the run's signal fire). It is the run's
 * teardown: unsubscribing stops listening to the signal, and cancels the timer of the run's tool
 * deadlines, which its batches leave armed (tool-deadlines.ts), so none outlives the run.
 *
 * Why an object rather than the teardown closure it replaced: a run waiting for its model holds
 * it, and that closure's context kept the run's subscribe scope (the prompts) alive; a run
 * without a signal (bench W5, heap per waiting session) makes no listener at all. Why the
 * listener is a function and not this object (`handleEvent`): Node's EventTarget wraps a
 * listener object in an async function, whose pending job kept the abort event, its reason's
 * stack and with them the whole run alive until the microtasks ran (test/reliability/soak.ts).
 */
export class RunTeardown implements Unsubscribable {
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly run: RunState,
    private readonly signal: AbortSignal | undefined,
  ) {
    if (!signal) return;
    const onAbort = () => run.cancellation.abort(signal.reason);
    this.onAbort = onAbort;
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) onAbort();
  }

  unsubscribe(): void {
    if (this.onAbort) this.signal?.removeEventListener("abort", this.onAbort);
    this.run.toolDeadlines?.unsubscribe();
    if (!this.run.ended) this.run.cancellation.abort(new Error("The run was unsubscribed"));
  }
}
