import { Observable, type Subscriber } from "rxjs";
import type { AgentEvent, ToolResultMessage } from "../types.js";

/**
 * One tool call's place in the ordered results: an Observable that emits the result message's
 * `message_start` and `message_end`, then completes, as soon as the call is settled.
 *
 * Why not an AsyncSubject plus a mapping operator: `concatMap` subscribes once per slot, and
 * this slot serves that one subscriber with no further machinery.
 */
export class ResultSlot {
  private message: ToolResultMessage | undefined;
  private waiting: Subscriber<AgentEvent> | undefined;

  readonly events: Observable<AgentEvent> = new Observable<AgentEvent>((subscriber) => {
    if (this.message) {
      emit(subscriber, this.message);
      return undefined;
    }
    this.waiting = subscriber;
    return () => {
      if (this.waiting === subscriber) this.waiting = undefined;
    };
  });

  fill(message: ToolResultMessage): void {
    this.message = message;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) emit(waiting, message);
  }
}

function emit(subscriber: Subscriber<AgentEvent>, message: ToolResultMessage): void {
  subscriber.next({ type: "message_start", message });
  subscriber.next({ type: "message_end", message });
  subscriber.complete();
}
