import { describe, expect, it } from "vitest";
import { OnDemandSubject, OnDemandValue } from "../../src/agent/on-demand-subject.js";

describe("OnDemandSubject", () => {
  it("passes on what comes after the first ask, drops what came before", () => {
    const stream = new OnDemandSubject<number>();
    stream.next(1);
    const heard: number[] = [];
    stream.observable.subscribe((value) => heard.push(value));
    stream.next(2);
    expect(heard).toStrictEqual([2]);
  });

  it("completes a subscriber that asks after complete at once", () => {
    const stream = new OnDemandSubject<number>();
    stream.complete();
    let completed = false;
    stream.observable.subscribe({ complete: () => (completed = true) });
    expect(completed).toBe(true);
  });
});

describe("OnDemandValue", () => {
  it("keeps the value without a subscriber and replays the latest to a late one, then every change", () => {
    const state = new OnDemandValue("a");
    state.next("b");
    expect(state.value).toBe("b");
    const heard: string[] = [];
    state.observable.subscribe((value) => heard.push(value));
    state.next("c");
    expect(heard).toStrictEqual(["b", "c"]);
  });
});
