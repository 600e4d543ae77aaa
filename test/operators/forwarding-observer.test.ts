import { Observable, Subject } from "rxjs";
import { describe, expect, it } from "vitest";
import { forwardingObserver } from "../../src/operators/forwarding-observer.js";

/** An Observable whose one inner subscription to `inner` runs `handlers`, recording what its subscriber hears. */
function outerOf(inner: Subject<number>, handlers: (subscriber: { next(value: string): void }) => Parameters<typeof forwardingObserver<number>>[1]) {
  const heard: unknown[] = [];
  const outer = new Observable<string>((subscriber) => inner.subscribe(forwardingObserver(subscriber, handlers(subscriber))));
  const subscription = outer.subscribe({ next: (value) => heard.push(value), error: (error: unknown) => heard.push({ error }), complete: () => heard.push("|") });
  return { heard, subscription };
}

describe("forwardingObserver", () => {
  it("passes a throw from next on as the subscriber's error, and hears nothing after", () => {
    const inner = new Subject<number>();
    const boom = new Error("boom");
    const { heard } = outerOf(inner, (subscriber) => ({
      next: (value) => {
        if (value === 2) throw boom;
        subscriber.next(`v${value}`);
      },
    }));
    inner.next(1);
    inner.next(2);
    inner.next(3);
    expect(heard).toStrictEqual(["v1", { error: boom }]);
    expect(inner.observed).toBe(false);
  });

  it("passes a throw from complete on as the subscriber's error", () => {
    const inner = new Subject<number>();
    const boom = new Error("boom");
    const { heard } = outerOf(inner, () => ({ complete: () => { throw boom; } }));
    inner.complete();
    expect(heard).toStrictEqual([{ error: boom }]);
  });

  it("passes an inner error on as it is, or to the error handler, whose own throw is passed on", () => {
    const plain = new Subject<number>();
    const failure = new Error("inner");
    const passed = outerOf(plain, () => ({}));
    plain.error(failure);
    expect(passed.heard).toStrictEqual([{ error: failure }]);

    const handled = new Subject<number>();
    const rethrown = new Error("handler");
    const seen: unknown[] = [];
    const withHandler = outerOf(handled, () => ({
      error: (error) => {
        seen.push(error);
        throw rethrown;
      },
    }));
    handled.error(failure);
    expect([seen, withHandler.heard]).toStrictEqual([[failure], [{ error: rethrown }]]);
  });

  it("calls no handler once the subscriber has left", () => {
    const inner = new Subject<number>();
    const called: string[] = [];
    const observer = forwardingObserver<number>({ closed: true, error: () => called.push("error") }, {
      next: () => called.push("next"),
      complete: () => called.push("complete"),
      error: () => called.push("error handler"),
    });
    inner.subscribe(observer);
    inner.next(1);
    inner.error(new Error("late"));
    expect(called).toStrictEqual([]);
  });

  it("is the subscriber itself (no wrapper per subscription), hears nothing after its end, and unsubscribes then", () => {
    const inner = new Subject<number>();
    const called: string[] = [];
    const observer = forwardingObserver<number>({ closed: false, error: () => called.push("error") }, {
      next: (value) => called.push(`next ${value}`),
      complete: () => {
        called.push("complete");
        inner.next(2);
      },
    });
    expect(inner.subscribe(observer)).toBe(observer);
    inner.next(1);
    inner.complete();
    inner.next(3);
    expect([called, observer.closed]).toStrictEqual([["next 1", "complete"], true]);
  });

  it("hears nothing once unsubscribed from outside, even from a source that keeps sending", () => {
    const called: string[] = [];
    let leaky: { next(value: number): void; complete(): void } | undefined;
    const source = new Observable<number>((subscriber) => {
      leaky = subscriber;
    });
    const observer = forwardingObserver<number>({ closed: false, error: () => called.push("error") }, {
      next: (value) => called.push(`next ${value}`),
      complete: () => called.push("complete"),
    });
    source.subscribe(observer);
    leaky!.next(1);
    observer.unsubscribe();
    leaky!.next(2);
    leaky!.complete();
    expect(called).toStrictEqual(["next 1"]);
  });
});
