import type { Observable } from "rxjs";
import type { AgentMessage, DrainableQueue, QueueMode } from "../types.js";
import type { MessageQueue } from "../streams/message-queue.js";

/**
 * A run's view of an agent's queue that may not exist yet: draining or peeking at a queue that
 * was never made finds it empty and makes nothing; listening for arrivals makes it.
 *
 * Why: an `Agent` keeps its two queues for its whole life, and most agents are never steered;
 * handing the loop the queues themselves made every agent that ran keep them (bench W5, heap
 * per idle agent).
 */
export class QueueView implements DrainableQueue {
  /**
   * @param skipFirstDrain the run's first drain finds the queue empty: `Agent.continue` already
   * took the run's first steering message, and the reference's loop does not poll again before
   * the first model call, so each queued message gets a turn of its own ("one-at-a-time").
   */
  constructor(
    private readonly existing: () => MessageQueue | undefined,
    private readonly made: () => MessageQueue,
    private skipFirstDrain = false,
  ) {}

  drain(mode: QueueMode): AgentMessage[] {
    if (this.skipFirstDrain) {
      this.skipFirstDrain = false;
      return [];
    }
    return this.existing()?.drain(mode) ?? [];
  }

  peek(): readonly AgentMessage[] {
    return this.existing()?.peek() ?? [];
  }

  get arrivals(): Observable<AgentMessage> {
    return this.made().arrivals;
  }
}
