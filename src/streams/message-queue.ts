import { Subject, type Observable } from "rxjs";
import type { AgentMessage, DrainableQueue, QueueMode } from "../types.js";

/**
 * A FIFO of steering or follow-up messages that the loop drains at its own moments.
 *
 * Why a queue and not only a Subject: messages typed while the agent streams must wait for the
 * next turn boundary, and whoever owns the queue (an `Agent`) must be able to count and clear
 * them.
 */
export class MessageQueue implements DrainableQueue {
  private messages: AgentMessage[] = [];
  private readonly arrivalSubject = new Subject<AgentMessage>();
  private readonly sizeSubject = new Subject<number>();

  readonly arrivals: Observable<AgentMessage> = this.arrivalSubject.asObservable();
  /** Emits the queue length after every change. */
  readonly size$: Observable<number> = this.sizeSubject.asObservable();

  get size(): number {
    return this.messages.length;
  }

  push(message: AgentMessage): void {
    this.messages.push(message);
    this.sizeSubject.next(this.messages.length);
    this.arrivalSubject.next(message);
  }

  drain(mode: QueueMode): AgentMessage[] {
    if (this.messages.length === 0) {
      return [];
    }
    const taken = mode === "all" ? this.messages.splice(0) : this.messages.splice(0, 1);
    this.sizeSubject.next(this.messages.length);
    return taken;
  }

  peek(): readonly AgentMessage[] {
    return this.messages;
  }

  /** Removes and returns everything queued. */
  clear(): AgentMessage[] {
    return this.drain("all");
  }
}
