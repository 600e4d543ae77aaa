import { Observable } from "rxjs";
import type { ToolCallCancellation } from "../../types.js";

const CANCELLED = "Tool call was cancelled";

/** The error text of a cancelled call. */
export function cancelledToolText(reason: string | undefined): string {
  return reason === undefined || reason === "" ? `${CANCELLED}.` : `${CANCELLED}: ${reason}`;
}

/**
 * The reason in a cancelled call's error text (`""` when it gave none), or undefined for any
 * other text: how an observer of the events (rxagent/otel) tells a cancel from a tool's failure.
 */
export function cancelReasonOf(text: string): string | undefined {
  if (text === `${CANCELLED}.`) return "";
  return text.startsWith(`${CANCELLED}: `) ? text.slice(CANCELLED.length + 2) : undefined;
}

/** A running call that wants to hear of its own cancellation. */
export interface CancellationListener {
  cancelled(message: string): void;
}

/**
 * One batch's cancellations of single calls, by call id: made only when the config has a
 * `cancellations` source, and fed by the batch's one subscription to it.
 *
 * A cancel reaches the call's running execution if it listens (`listen`); otherwise `waiting`
 * is told (the batch settles a call that is announced but not running yet), and the id stays
 * marked so the call never runs (`messageFor`). Why a Map of listeners rather than a
 * subscription per call: a batch without a cancel pays nothing per call.
 */
export class CallCancellations {
  private readonly messages = new Map<string, string>();
  private readonly listeners = new Map<string, CancellationListener>();

  constructor(private readonly waiting: (toolCallId: string, message: string) => void) {}

  /** The error text of a call cancelled so far, if it was. */
  messageFor(toolCallId: string): string | undefined {
    return this.messages.size === 0 ? undefined : this.messages.get(toolCallId);
  }

  /** Emits the call's error text once it is cancelled (at once if it was), then completes. */
  message$(toolCallId: string): Observable<string> {
    return new Observable<string>((subscriber) => {
      const listener: CancellationListener = {
        cancelled: (message) => {
          subscriber.next(message);
          subscriber.complete();
        },
      };
      this.listen(toolCallId, listener);
      return () => this.stopListening(toolCallId, listener);
    });
  }

  cancel(cancellation: ToolCallCancellation): void {
    // A malformed cancel (from a caller's own source) is not one: nothing to cancel.
    if (typeof cancellation !== "object" || cancellation === null) return;
    const { toolCallId } = cancellation;
    if (typeof toolCallId !== "string" || this.messages.has(toolCallId)) return;
    const message = cancelledToolText(typeof cancellation.reason === "string" ? cancellation.reason : undefined);
    this.messages.set(toolCallId, message);
    const listener = this.listeners.get(toolCallId);
    if (listener) {
      this.listeners.delete(toolCallId);
      listener.cancelled(message);
    } else {
      this.waiting(toolCallId, message);
    }
  }

  /** Tells `listener` of the call's cancellation (at once if it happened) until `stopListening`. */
  listen(toolCallId: string, listener: CancellationListener): void {
    const message = this.messageFor(toolCallId);
    if (message !== undefined) listener.cancelled(message);
    else this.listeners.set(toolCallId, listener);
  }

  stopListening(toolCallId: string, listener: CancellationListener): void {
    if (this.listeners.get(toolCallId) === listener) this.listeners.delete(toolCallId);
  }
}
