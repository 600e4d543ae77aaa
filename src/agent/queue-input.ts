import { Subject, type Subscription } from "rxjs";
import type { AgentMessage } from "../types.js";
import type { MessageQueue } from "../streams/message-queue.js";

/**
 * The way in to a queue: `push`, or a Subject made when first asked for whose messages go to the
 * queue until `close`. Why on demand: most agents are only ever steered through their methods,
 * and an idle agent should not hold a Subject and a subscription per queue.
 */
export class QueueInput {
  private subject: Subject<AgentMessage> | undefined;
  private wiring: Subscription | undefined;
  private closed = false;

  constructor(private readonly queue: MessageQueue) {}

  get subject$(): Subject<AgentMessage> {
    if (!this.subject) {
      const subject = new Subject<AgentMessage>();
      if (!this.closed) this.wiring = subject.subscribe((message) => this.queue.push(message));
      this.subject = subject;
    }
    return this.subject;
  }

  /** Through the Subject when someone made it, so whoever listens to it hears this too. */
  push(message: AgentMessage): void {
    if (this.subject) this.subject.next(message);
    else if (!this.closed) this.queue.push(message);
  }

  close(): void {
    this.closed = true;
    this.wiring?.unsubscribe();
  }
}
