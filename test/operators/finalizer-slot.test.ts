import { Observable, Subscriber, Subscription } from "rxjs";
import { describe, expect, it } from "vitest";
import { reserveFinalizerSlots } from "../../src/operators/finalizer-slot.js";

/** rxjs's list of what a subscription tears down with it, which the room is made in. */
function finalizersOf(subscription: Subscription): unknown[] | null | undefined {
  return (subscription as unknown as { _finalizers?: unknown[] | null })._finalizers;
}

describe("reserveFinalizerSlots", () => {
  it("gives rxjs an empty list that its add then fills, the same array", () => {
    const subscription = new Subscription();
    reserveFinalizerSlots(subscription, 1);
    const reserved = finalizersOf(subscription);
    expect(reserved).toEqual([]);
    const teardown = () => undefined;
    subscription.add(teardown);
    expect(finalizersOf(subscription)).toBe(reserved);
    expect(reserved).toEqual([teardown]);
  });

  it("runs every finalizer on unsubscribe, those past the room as well", () => {
    const subscription = new Subscription();
    reserveFinalizerSlots(subscription, 1);
    const ran: string[] = [];
    subscription.add(() => ran.push("first"));
    subscription.add(() => ran.push("second"));
    subscription.add(new Subscription(() => ran.push("third")));
    subscription.unsubscribe();
    expect(ran).toEqual(["first", "second", "third"]);
  });

  it("leaves a list rxjs has begun as it is", () => {
    const subscription = new Subscription();
    const ran: string[] = [];
    subscription.add(() => ran.push("added before"));
    reserveFinalizerSlots(subscription, 2);
    subscription.add(() => ran.push("added after"));
    subscription.unsubscribe();
    expect(ran).toEqual(["added before", "added after"]);
  });

  it("lets a subscriber that leaves drop out of the reserved list of the one it feeds", () => {
    const destination = new Subscriber<number>();
    reserveFinalizerSlots(destination, 1);
    const inner = new Subscriber<number>(destination);
    expect(finalizersOf(destination)).toEqual([inner]);
    inner.unsubscribe();
    expect(finalizersOf(destination)).toEqual([]);
    expect(destination.closed).toBe(false);
  });

  it("tears down a source subscribed with the subscriber when the subscriber leaves", () => {
    let tornDown = false;
    const source = new Observable<number>(() => () => {
      tornDown = true;
    });
    const subscriber = new Subscriber<number>();
    reserveFinalizerSlots(subscriber, 1);
    source.subscribe(subscriber);
    subscriber.unsubscribe();
    expect(tornDown).toBe(true);
  });
});
