import { NEVER, Subject, type Observable } from "rxjs";
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
  // Created on first use: an agent holds two queues for its whole life, and most are never listened to.
  private arrivalSubject: Subject<AgentMessage> | undefined;
  private arrivalObservable: Observable<AgentMessage> | undefined;
  private sizeSubject: Subject<number> | undefined;
  private sizeObservable: Observable<number> | undefined;

  /** @param onSizeChange told the queue length after every change (cheaper than `size$`). */
  constructor(private readonly onSizeChange?: (size: number) => void) {}

  get arrivals(): Observable<AgentMessage> {
    return (this.arrivalObservable ??= (this.arrivalSubject ??= new Subject()).asObservable());
  }

  /** Emits the queue length after every change. */
  get size$(): Observable<number> {
    return (this.sizeObservable ??= (this.sizeSubject ??= new Subject()).asObservable());
  }

  get size(): number {
    return this.messages.length;
  }

  push(message: AgentMessage): void {
    this.messages.push(message);
    this.sizeChanged();
    this.arrivalSubject?.next(message);
  }

  drain(mode: QueueMode): AgentMessage[] {
    if (this.messages.length === 0) {
      return [];
    }
    const taken = mode === "all" ? this.messages.splice(0) : this.messages.splice(0, 1);
    this.sizeChanged();
    return taken;
  }

  peek(): readonly AgentMessage[] {
    return this.messages;
  }

  /** Removes and returns everything queued. */
  clear(): AgentMessage[] {
    return this.drain("all");
  }

  private sizeChanged(): void {
    this.onSizeChange?.(this.messages.length);
    this.sizeSubject?.next(this.messages.length);
  }
}

/**
 * The queue of a run that was given none: always empty. Why one shared object: nothing can be
 * pushed to it, and most runs have neither steering nor follow-ups.
 */
export const noMessages: DrainableQueue = {
  drain: () => [],
  peek: () => [],
  arrivals: NEVER,
};
