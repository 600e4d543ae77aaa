import { NEVER, Observable, type OperatorFunction } from "rxjs";
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
      let started = false;
      let ended = false;
      let partial: AssistantMessage | undefined;

      const end = (message: AssistantMessage) => {
        if (ended) return;
        ended = true;
        if (!started) {
          started = true;
          subscriber.next({ type: "message_start", message });
        }
        subscriber.next({ type: "message_end", message });
        subscriber.complete();
      };

      // NEVER, a run without a signal: nothing to listen to.
      const abortSubscription =
        abort$ === NEVER ? undefined : abort$.subscribe(() => end(fallback(partial, "aborted", "Request was aborted")));
      if (ended) {
        return abortSubscription;
      }
      const sourceSubscription = source.subscribe({
        next: (event) => {
          if (ended) return;
          switch (event.type) {
            case "done":
              onModelEnd?.();
              end(event.message);
              return;
            case "error":
              onModelEnd?.();
              end(event.error);
              return;
            case "start":
              partial = event.partial;
              if (!started) {
                started = true;
                subscriber.next({ type: "message_start", message: event.partial });
              }
              return;
            default:
              partial = event.partial;
              if (!started) {
                started = true;
                subscriber.next({ type: "message_start", message: event.partial });
              }
              subscriber.next({ type: "message_update", message: event.partial, assistantMessageEvent: event });
          }
        },
        error: (error: unknown) =>
          end(
            fallback(
              partial,
              "error",
              error instanceof RxAgentError ? error.message : `Model stream failed: ${errorText(error)}`,
            ),
          ),
        complete: () =>
          end(fallback(partial, "error", "Model stream completed without a done or error event")),
      });
      return () => {
        abortSubscription?.unsubscribe();
        sourceSubscription.unsubscribe();
      };
    });
}
