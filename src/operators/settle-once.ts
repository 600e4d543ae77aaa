import { Observable, type Subscriber } from "rxjs";
import { InvalidStateError } from "../errors.js";

/**
 * An Observable for one subscriber that hears the outcome once it is settled: at once if it
 * already is, else when `settle` comes; a subscriber that left before then hears nothing.
 * Subclasses say what the outcome is (`deliver`).
 *
 * Why: the loop hands on a result per tool call and the next turn per turn through these, and
 * one object serving its one subscriber holds about 0.5 KB of heap once subscribed, against
 * 1.5 KB for an `AsyncSubject` piped through a `map` (20,000 of each, heap after a full GC,
 * Node 20, 2026-12-01); bench W2 (8 calls per turn) and W4 (2000 turns) run through them.
 * Why no teardown that forgets a subscriber leaving early: rxjs would give that subscriber an
 * array of finalizers for it, and a run waiting for its model holds one of these per turn (bench
 * W5, heap per waiting session); a closed subscriber is simply not served.
 *
 * Contract: one subscriber at a time. A second one while the first still waits gets an
 * `InvalidStateError` and the first keeps waiting (the loop's `concatMap` and `expand` subscribe
 * once); after settling, or once the first has left, anyone may subscribe.
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
    if (waiting && !waiting.closed) this.deliver(waiting);
  }

  private static serve(this: Observable<unknown>, subscriber: Subscriber<unknown>): void {
    const cell = this as SettleOnce<unknown>;
    if (cell.settled) cell.deliver(subscriber);
    // Checked on subscribing only, so the limit costs no field and nothing on the settle path.
    else if (cell.waiting && !cell.waiting.closed) subscriber.error(new InvalidStateError("A SettleOnce serves one subscriber at a time; another one is still waiting"));
    else cell.waiting = subscriber;
  }
}
