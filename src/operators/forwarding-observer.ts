import { type Observer, Subscription } from "rxjs";

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
 * destination the same way. Why a `Subscription` that is its own observer: `subscribe` takes
 * such an object as the subscriber itself (rxjs's `isSubscriber`), where a plain observer gets
 * wrapped in a `SafeSubscriber` and a `ConsumerObserver`: two objects fewer per inner
 * subscription and two calls fewer per value on the loop's hottest path (every model event).
 *
 * @example
 * model$.subscribe(forwardingObserver(subscriber, { next: (event) => subscriber.next(event), complete: endTurn }));
 */
export function forwardingObserver<T>(destination: ErrorDestination, handlers: ForwardingHandlers<T>): Observer<T> & Subscription {
  return new ForwardingObserver(destination, handlers);
}

class ForwardingObserver<T> extends Subscription implements Observer<T> {
  // Set before the end's handler runs, as rxjs's Subscriber does: what a handler triggers is not heard.
  private stopped = false;

  constructor(
    private readonly destination: ErrorDestination,
    private readonly handlers: ForwardingHandlers<T>,
  ) {
    super();
  }

  next(value: T): void {
    // `closed`: unsubscribed from outside, as a SafeSubscriber would be, it hears nothing more.
    if (this.stopped || this.closed || this.destination.closed || !this.handlers.next) return;
    try {
      this.handlers.next(value);
    } catch (error) {
      this.destination.error(error);
    }
  }

  error(error: unknown): void {
    if (this.stopped || this.closed) return;
    this.stopped = true;
    if (!this.destination.closed) {
      if (!this.handlers.error) this.destination.error(error);
      else {
        try {
          this.handlers.error(error);
        } catch (thrown) {
          this.destination.error(thrown);
        }
      }
    }
    this.unsubscribe();
  }

  complete(): void {
    if (this.stopped || this.closed) return;
    this.stopped = true;
    if (!this.destination.closed && this.handlers.complete) {
      try {
        this.handlers.complete();
      } catch (error) {
        this.destination.error(error);
      }
    }
    this.unsubscribe();
  }
}
