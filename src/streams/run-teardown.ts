import type { Unsubscribable } from "rxjs";
import type { RunState } from "./run-state.js";

/**
 * What ties a run to its caller: an abort of the caller's `signal` aborts the run, and leaving
 * before `agent_end` aborts it too (hooks and tools see the run's signal fire). It is the run's
 * teardown: unsubscribing stops listening to the signal.
 *
 * Why one object that is its own listener (`handleEvent`) and its own teardown: a run waiting
 * for its model holds it, and it replaced two closures and the two contexts they kept alive,
 * with the run's prompts (about 300 bytes per run, bench W5, heap per waiting session).
 */
export class RunTeardown implements Unsubscribable, EventListenerObject {
  constructor(
    private readonly run: RunState,
    private readonly signal: AbortSignal | undefined,
  ) {
    if (!signal) return;
    signal.addEventListener("abort", this, { once: true });
    if (signal.aborted) this.handleEvent();
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.run.cancellation.abort(this.signal?.reason);
  }

  unsubscribe(): void {
    this.signal?.removeEventListener("abort", this);
    if (!this.run.ended) this.run.cancellation.abort(new Error("The run was unsubscribed"));
  }
}
