import { Observable, type Subscriber, type TeardownLogic } from "rxjs";
import type { AgentEvent, ToolResultMessage } from "../types.js";

/**
 * One tool call's place in the ordered results: an Observable that emits the result message's
 * `message_start` and `message_end`, then completes, as soon as the call is settled.
 *
 * Why not an AsyncSubject plus a mapping operator: `concatMap` subscribes once per slot, and
 * this slot serves that one subscriber with no further machinery.
 */
export class ResultSlot extends Observable<AgentEvent> {
  message: ToolResultMessage | undefined;
  waiting: Subscriber<AgentEvent> | undefined;

  constructor() {
    // A function of the module's rather than a closure per slot: rxjs calls it with the slot as `this`.
    super(serveSlot);
  }

  fill(message: ToolResultMessage): void {
    this.message = message;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) emit(waiting, message);
  }
}

function serveSlot(this: Observable<AgentEvent>, subscriber: Subscriber<AgentEvent>): TeardownLogic {
  const slot = this as ResultSlot;
  if (slot.message) {
    emit(subscriber, slot.message);
    return undefined;
  }
  slot.waiting = subscriber;
  return () => {
    if (slot.waiting === subscriber) slot.waiting = undefined;
  };
}

function emit(subscriber: Subscriber<AgentEvent>, message: ToolResultMessage): void {
  subscriber.next({ type: "message_start", message });
  subscriber.next({ type: "message_end", message });
  subscriber.complete();
}
