import { merge, type Observable } from "rxjs";
import { type AgentListener, RunListeners } from "./run-listeners.js";

/**
 * An `Agent`'s `subscribe` listeners, and the runs they are still working on. The Agent makes
 * this object only at its first `subscribe`: most agents have no listener.
 */
export class AgentListeners<TOutput> {
  /** In the order they came (a Set keeps it): each event reaches them in that order. */
  private readonly listeners = new Set<AgentListener<TOutput>>();
  /** Runs whose listeners are not done yet, oldest first. */
  private readonly unsettledRuns = new Set<RunListeners<TOutput>>();

  constructor(private readonly onError: (message: string) => void) {}

  /** Adds `listener`; returns the function that detaches it. */
  add(listener: AgentListener<TOutput>): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** The deliveries of a new run, tracked until the listeners are done with it. */
  forRun(controller: AbortController): RunListeners<TOutput> {
    const run = new RunListeners(this.listeners, controller, this.onError);
    this.unsettledRuns.add(run);
    run.settled().subscribe({ complete: () => this.unsettledRuns.delete(run) });
    return run;
  }

  /** Completes once the listeners are done with every run so far. */
  settled(): Observable<void> {
    return merge(...[...this.unsettledRuns].map((run) => run.settled()));
  }

  /** The controller of the latest run the listeners still work on (`Agent.signal` after `agent_end`). */
  latestController(): AbortController | undefined {
    let latest: AbortController | undefined;
    for (const run of this.unsettledRuns) latest = run.controller;
    return latest;
  }
}
