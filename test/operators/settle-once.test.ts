import type { Subscriber } from "rxjs";
import { describe, expect, it } from "vitest";
import { InvalidStateError } from "../../src/errors.js";
import { SettleOnce } from "../../src/operators/settle-once.js";

class Answer extends SettleOnce<string> {
  private value = "";

  answer(value: string): void {
    this.value = value;
    this.settle();
  }

  protected deliver(subscriber: Subscriber<string>): void {
    subscriber.next(this.value);
    subscriber.complete();
  }
}

function record(answer: Answer) {
  const heard: unknown[] = [];
  const subscription = answer.subscribe({ next: (value) => heard.push(value), error: (error: unknown) => heard.push(error), complete: () => heard.push("|") });
  return { heard, subscription };
}

describe("SettleOnce", () => {
  it("delivers to a subscriber that waits, once settled", () => {
    const answer = new Answer();
    const { heard } = record(answer);
    expect(heard).toStrictEqual([]);
    answer.answer("a");
    expect(heard).toStrictEqual(["a", "|"]);
  });

  it("delivers at once to a subscriber that comes after", () => {
    const answer = new Answer();
    answer.answer("b");
    expect(record(answer).heard).toStrictEqual(["b", "|"]);
  });

  it("delivers nothing to a subscriber that left before", () => {
    const answer = new Answer();
    const { heard, subscription } = record(answer);
    subscription.unsubscribe();
    answer.answer("c");
    expect(heard).toStrictEqual([]);
  });

  it("refuses a second subscriber while the first waits, and the first still hears the outcome", () => {
    const answer = new Answer();
    const first = record(answer);
    const second = record(answer);
    expect(second.heard).toStrictEqual([expect.any(InvalidStateError)]);
    expect(String(second.heard[0])).toMatch(/one subscriber at a time/);
    answer.answer("d");
    expect(first.heard).toStrictEqual(["d", "|"]);
  });

  it("serves a new subscriber once the first has left", () => {
    const answer = new Answer();
    record(answer).subscription.unsubscribe();
    const next = record(answer);
    answer.answer("e");
    expect(next.heard).toStrictEqual(["e", "|"]);
  });
});
