import type { MonoTypeOperatorFunction } from "rxjs";
import { concatMap, defer, EMPTY, throwError } from "rxjs";
import type { ModelErrorEvent, ModelEvent } from "../types/model.js";

/**
 * A model call that failed before it streamed any content: nothing of it reached the consumer,
 * so it can be sent again (`withRetry`) or to another model (`withFallback`).
 */
export class FailedBeforeContent extends Error {
  constructor(
    /** The events held back before the failure (a `start`), to emit if nobody takes over. */
    readonly held: readonly ModelEvent[],
    readonly event: ModelErrorEvent,
  ) {
    super(event.error.errorMessage ?? "Model call failed");
    this.name = new.target.name;
  }
}

/**
 * Holds back a model stream's `start` until its first content event, and turns an `error` event
 * that comes before any content, and that `handOver` accepts, into a `FailedBeforeContent` error.
 *
 * Intuition: `start` alone shows the consumer nothing, so a retry may replace it; one text delta
 * shown means a retry would duplicate text, so from then on every event passes unchanged.
 *
 * ```text
 * source:  s--e            (start, error)       s--t--d|   (start, text, done)
 * result:  ---#  FailedBeforeContent([s], e)    ---(st)--d|
 * ```
 */
export function failBeforeContent(handOver: (event: ModelErrorEvent) => boolean): MonoTypeOperatorFunction<ModelEvent> {
  return (source) =>
    defer(() => {
      let held: ModelEvent[] | undefined = [];
      return source.pipe(
        concatMap((event) => {
          if (held === undefined) return [event];
          if (event.type === "start") {
            held.push(event);
            return EMPTY;
          }
          if (event.type === "error" && handOver(event)) return throwError(() => new FailedBeforeContent(held ?? [], event));
          const released: ModelEvent[] = [...held, event];
          held = undefined;
          return released;
        }),
      );
    });
}
