import type { Observer } from "rxjs";

/** What an inner subscription does with its values and its end; an error is passed on unless `error` says otherwise. */
export interface ForwardingHandlers<T> {
  next?(value: T): void;
  error?(error: unknown): void;
  complete?(): void;
}

/** Where a forwarding observer passes errors on: the subscriber of the Observable that made the inner subscription. */
export interface ErrorDestination {
  readonly closed: boolean;
  error(error: unknown): void;
}

/**
 * The observer of an inner subscription whose handlers are our own code: a throw inside a handler
 * reaches `destination.error`, and nothing reaches the handlers once `destination` is closed.
 *
 * Why: rxjs sends a throw from a plain observer to its unhandled-error path (a `setTimeout`
 * rethrow), so the run would never end; rxjs's own `OperatorSubscriber` catches into the
 * destination the same way. Why a class with the handlers as fields: one object per inner
 * subscription (beside its handlers), made once per turn or batch, and nothing per value.
 *
 * @example
 * model$.subscribe(forwardingObserver(subscriber, { next: (event) => subscriber.next(event), complete: endTurn }));
 */
export function forwardingObserver<T>(destination: ErrorDestination, handlers: ForwardingHandlers<T>): Observer<T> {
  return new ForwardingObserver(destination, handlers);
}

class ForwardingObserver<T> implements Observer<T> {
  constructor(
    private readonly destination: ErrorDestination,
    private readonly handlers: ForwardingHandlers<T>,
  ) {}

  next(value: T): void {
    if (this.destination.closed || !this.handlers.next) return;
    try {
      this.handlers.next(value);
    } catch (error) {
      this.destination.error(error);
    }
  }

  error(error: unknown): void {
    if (this.destination.closed) return;
    if (!this.handlers.error) {
      this.destination.error(error);
      return;
    }
    try {
      this.handlers.error(error);
    } catch (thrown) {
      this.destination.error(thrown);
    }
  }

  complete(): void {
    if (this.destination.closed || !this.handlers.complete) return;
    try {
      this.handlers.complete();
    } catch (error) {
      this.destination.error(error);
    }
  }
}
