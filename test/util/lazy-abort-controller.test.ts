import { describe, expect, it } from "vitest";
import { LazyAbortController } from "../../src/util/lazy-abort-controller.js";

describe("LazyAbortController", () => {
  it("aborts a signal read before abort, with the first reason", () => {
    const controller = new LazyAbortController();
    const signal = controller.signal;
    const first = new Error("first");
    controller.abort(first);
    controller.abort(new Error("second"));
    expect([controller.aborted, signal.aborted, signal.reason]).toStrictEqual([true, true, first]);
  });

  it("hands out an aborted signal, with the reason, when read after abort", () => {
    const controller = new LazyAbortController();
    const reason = new Error("gone");
    controller.abort(reason);
    expect([controller.signal.aborted, controller.signal.reason]).toStrictEqual([true, reason]);
  });

  it("is not aborted, and hands out one signal, until abort", () => {
    const controller = new LazyAbortController();
    expect(controller.aborted).toBe(false);
    expect(controller.signal).toBe(controller.signal);
    expect(controller.signal.aborted).toBe(false);
  });
});
