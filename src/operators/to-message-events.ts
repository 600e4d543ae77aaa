import { NEVER, Observable, type Observer, type OperatorFunction, type Subscriber } from "rxjs";
import { errorText, RxAgentError } from "../errors.js";
import type { AgentEvent, AssistantMessage, ModelEvent, StopReason } from "../types.js";

/** Builds the final message the loop uses when the model did not deliver one. */
export type FallbackMessage = (
  partial: AssistantMessage | undefined,
  stopReason: Extract<StopReason, "error" | "aborted">,
  errorMessage: string,
) => AssistantMessage;

/**
 * Maps one model call's events to the assistant message's `message_start`, `message_update`s
 * and `message_end`, then completes.
 *
 * Emits `message_end` exactly once, whatever the model does: on `done`/`error` it carries the
 * model's final message; when `abort$` emits, the model Observable errors, or it completes
 * without a final event, it carries an error or aborted message built by `fallback`. A model
 * that skipped `start` still gets a `message_start` first. The source is unsubscribed as soon as
 * the message has ended, which aborts the request. `onModelEnd` is told when the model itself
 * delivered its final event.
 */
export function toMessageEvents(
  abort$: Observable<void>,
  fallback: FallbackMessage,
  onModelEnd?: () => void,
): OperatorFunction<ModelEvent, AgentEvent> {
  return (source) =>
    new Observable<AgentEvent>((subscriber) => {
      const call = new MessageEvents(subscriber, fallback, onModelEnd);
      // NEVER, a run without a signal: nothing to listen to.
      const abortSubscription = abort$ === NEVER ? undefined : abort$.subscribe(() => call.abort());
      if (call.ended) {
        return abortSubscription;
      }
      const sourceSubscription = source.subscribe(call);
      return () => {
        abortSubscription?.unsubscribe();
        sourceSubscription.unsubscribe();
      };
    });
}

/**
 * One model call's messages events: the observer of the model's events. Why a class: a call is
 * made every turn and lives as long as the model streams, and one object with its methods on the
 * prototype replaces a handful of closures and their context.
 */
class MessageEvents implements Observer<ModelEvent> {
  started = false;
  ended = false;
  private partial: AssistantMessage | undefined;

  constructor(
    private readonly subscriber: Subscriber<AgentEvent>,
    private readonly fallback: FallbackMessage,
    private readonly onModelEnd: (() => void) | undefined,
  ) {}

  next(event: ModelEvent): void {
    if (this.ended) return;
    switch (event.type) {
      case "done":
        this.onModelEnd?.();
        this.end(event.message);
        return;
      case "error":
        this.onModelEnd?.();
        this.end(event.error);
        return;
      case "start":
        this.partial = event.partial;
        this.start(event.partial);
        return;
      default:
        this.partial = event.partial;
        this.start(event.partial);
        this.subscriber.next({ type: "message_update", message: event.partial, assistantMessageEvent: event });
    }
  }

  error(error: unknown): void {
    const text = error instanceof RxAgentError ? error.message : `Model stream failed: ${errorText(error)}`;
    this.end(this.fallback(this.partial, "error", text));
  }

  complete(): void {
    this.end(this.fallback(this.partial, "error", "Model stream completed without a done or error event"));
  }

  abort(): void {
    this.end(this.fallback(this.partial, "aborted", "Request was aborted"));
  }

  /** A model that skipped `start` still gets a `message_start` first. */
  private start(message: AssistantMessage): void {
    if (this.started) return;
    this.started = true;
    this.subscriber.next({ type: "message_start", message });
  }

  private end(message: AssistantMessage): void {
    if (this.ended) return;
    this.ended = true;
    this.start(message);
    this.subscriber.next({ type: "message_end", message });
    this.subscriber.complete();
  }
}
