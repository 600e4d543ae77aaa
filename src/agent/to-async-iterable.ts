import type { Observable, Subscription } from "rxjs";
import { RxAgentError } from "../errors.js";

/** Thrown by the iterator when the consumer fell more than `bufferSize` values behind. */
export class BufferOverflowError extends RxAgentError {}

export interface ToAsyncIterableOptions {
  /** Most values held for a slow consumer. Default 10,000. */
  bufferSize?: number;
  /**
   * What happens when the buffer is full: `"error"` (default) ends the iteration with a
   * `BufferOverflowError`, so nothing is lost silently; `"drop-oldest"` keeps the newest values
   * (for state streams where only the latest matters).
   */
  overflow?: "error" | "drop-oldest";
}

/**
 * Iterates an Observable with `for await`. Subscribes when iteration starts, buffers what the
 * consumer has not taken yet (bounded, see `overflow`), and unsubscribes when the loop exits
 * early (`break`, `return`, a throw).
 *
 * @example
 * for await (const event of toAsyncIterable(agent.prompt("Hi"))) console.log(event.type);
 */
export function toAsyncIterable<T>(source: Observable<T>, options: ToAsyncIterableOptions = {}): AsyncIterable<T> {
  const bufferSize = options.bufferSize ?? 10_000;
  const overflow = options.overflow ?? "error";
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      // An array with a moving head: shift() would copy the whole buffer on every value.
      let buffer: T[] = [];
      let head = 0;
      const size = () => buffer.length - head;
      const take = (): T => {
        const value = buffer[head] as T;
        head += 1;
        if (head > 1024 && head * 2 > buffer.length) {
          buffer = buffer.slice(head);
          head = 0;
        }
        return value;
      };
      let subscription: Subscription | undefined;
      let cancelled = false;
      let finished = false;
      let failure: { error: unknown } | undefined;
      let wake: (() => void) | undefined;
      const notify = () => {
        const resume = wake;
        wake = undefined;
        resume?.();
      };
      subscription = source.subscribe({
        next: (value) => {
          if (cancelled) return;
          if (size() >= bufferSize) {
            if (overflow === "drop-oldest") {
              take();
            } else {
              failure ??= { error: new BufferOverflowError(`The consumer fell more than ${bufferSize} values behind.`) };
              cancelled = true;
              subscription?.unsubscribe();
              notify();
              return;
            }
          }
          buffer.push(value);
          notify();
        },
        error: (error: unknown) => {
          failure ??= { error };
          notify();
        },
        complete: () => {
          finished = true;
          notify();
        },
      });
      if (cancelled) subscription.unsubscribe();
      const next = async (): Promise<IteratorResult<T>> => {
        for (;;) {
          if (size() > 0) return { value: take(), done: false };
          if (failure) throw failure.error;
          if (finished) return { value: undefined, done: true };
          await new Promise<void>((resolve) => (wake = resolve));
        }
      };
      return {
        next,
        return: async () => {
          cancelled = true;
          subscription?.unsubscribe();
          finished = true;
          return { value: undefined, done: true };
        },
      };
    },
  };
}
