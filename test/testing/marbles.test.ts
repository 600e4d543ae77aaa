import { describe, expect, it } from "vitest";
import { map, timer } from "rxjs";
import { configureMarbles } from "../../src/testing/index.js";

const marbles = configureMarbles((actual, expected) => expect(actual).toStrictEqual(expected));

describe("configureMarbles", () => {
  it(
    "runs the body in virtual time with the scheduler in hand",
    marbles(({ scheduler, cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a-b|");
      expectObservable(source.pipe(map((letter) => letter.toUpperCase()))).toBe("-A-B|");
      expectSubscriptions(source.subscriptions).toBe("^---!");
      expectObservable(timer(1000, scheduler)).toBe("1000ms (0|)", { 0: 0 });
    }),
  );

  it("fails the test when the observable differs from the marble", () => {
    const wrong = marbles(({ cold, expectObservable }) => expectObservable(cold("-a|")).toBe("-b|"));
    expect(wrong).toThrow(/toStrictEqual|expected/i);
  });

  it("gives every test a fresh scheduler", () => {
    const frames: number[] = [];
    const body = marbles(({ scheduler }) => void frames.push(scheduler.now()));
    body();
    body();
    expect(frames).toStrictEqual([0, 0]);
  });
});
