import { Observable, type Subscriber, type TeardownLogic } from "rxjs";

/**
 * An Observable for one subscriber that hears the outcome once it is settled: at once if it
 * already is, else when `settle` comes. Subclasses say what the outcome is (`deliver`).
 *
 * Why: the loop hands on a result per tool call and the next turn per turn through these, and
 * one object serving its one subscriber holds about 0.5 KB of heap once subscribed, against
 * 1.5 KB for an `AsyncSubject` piped through a `map` (20,000 of each, heap after a full GC,
 * Node 20, 2026-12-01); bench W2 (8 calls per turn) and W4 (2000 turns) run through them.
 */
export abstract class SettleOnce<T> extends Observable<T> {
  private settled = false;
  private waiting: Subscriber<T> | undefined;

  constructor() {
    // A static function rather than a closure per object: rxjs calls it with the object as `this`.
    super(SettleOnce.serve);
  }

  /** Emits the outcome to `subscriber` (and completes or errors it). */
  protected abstract deliver(subscriber: Subscriber<T>): void;

  protected settle(): void {
    this.settled = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) this.deliver(waiting);
  }

  private static serve(this: Observable<unknown>, subscriber: Subscriber<unknown>): TeardownLogic {
    const cell = this as SettleOnce<unknown>;
    if (cell.settled) {
      cell.deliver(subscriber);
      return undefined;
    }
    cell.waiting = subscriber;
    return () => {
      if (cell.waiting === subscriber) cell.waiting = undefined;
    };
  }
}
