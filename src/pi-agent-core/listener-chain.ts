import type { AgentEvent } from "./types.js";

/** Where the reference's loop sends each event, awaiting it before it goes on. */
export type AgentEventSink = (event: AgentEvent) => Promise<void> | void;

/**
 * Hands a run's events to the sink one at a time, each after the one before has settled.
 *
 * Why a chain and not an await per event: rxagent's loop pushes its events and does not wait.
 * The reference awaits the sink before its next step, and code built on it relies on that (pi
 * saves a message and may replace it in place in `message_end` before the next model call
 * sees it). So the loop's steps that matter wait for `settled()` instead: the model call (in
 * `transformContext`), each tool's execution, and the queue polls after a turn
 * (loop-config.ts). Between those steps the loop runs ahead of the sink, which no caller sees.
 */
export class ListenerChain {
  private tail: Promise<void> = Promise.resolve();
  private failed = false;

  constructor(
    private readonly sink: AgentEventSink,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  push(event: AgentEvent): void {
    if (this.failed) return;
    this.tail = this.tail.then(() => this.sink(event));
    this.tail.catch((error: unknown) => {
      if (this.failed) return;
      this.failed = true;
      this.onFailure(error);
    });
  }

  /** Resolves once every event pushed so far has been handled (rejects if the sink threw). */
  settled(): Promise<void> {
    return this.tail;
  }
}
