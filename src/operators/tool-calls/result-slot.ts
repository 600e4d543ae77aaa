import type { Subscriber } from "rxjs";
import type { AgentEvent, ToolResultMessage } from "../../types.js";
import { SettleOnce } from "../settle-once.js";

/**
 * One tool call's place in the ordered results: an Observable that emits the result message's
 * `message_start` and `message_end`, then completes, as soon as the call is settled.
 */
export class ResultSlot extends SettleOnce<AgentEvent> {
  private message: ToolResultMessage | undefined;

  fill(message: ToolResultMessage): void {
    this.message = message;
    this.settle();
  }

  protected deliver(subscriber: Subscriber<AgentEvent>): void {
    const message = this.message!;
    subscriber.next({ type: "message_start", message });
    subscriber.next({ type: "message_end", message });
    subscriber.complete();
  }
}
