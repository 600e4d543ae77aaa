import { type SchedulerAction, type SchedulerLike, type Subscription } from "rxjs";
import { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import { type DeadlineListener, ToolDeadlines } from "../../../src/operators/tool-calls/tool-deadlines.js";

/** A virtual-time scheduler that counts the timers armed on it. */
function countingScheduler() {
  const testScheduler = new TestScheduler((actual, expected) => expect(actual).toStrictEqual(expected));
  const counts = { armed: 0 };
  const scheduler: SchedulerLike = {
    now: () => testScheduler.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription {
      counts.armed += 1;
      return testScheduler.schedule(work, delay, state);
    },
  };
  return { testScheduler, scheduler, counts };
}

function listener(name: string, heard: string[], testScheduler: TestScheduler): DeadlineListener {
  return { timedOut: () => heard.push(`${name}@${testScheduler.now()}`) };
}

describe("ToolDeadlines", () => {
  it("tells each call at its own deadline, in start order for equal ones, with one timer at a time", () => {
    const { testScheduler, scheduler, counts } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    deadlines.add(listener("a", heard, testScheduler), 100);
    deadlines.add(listener("b", heard, testScheduler), 100);
    deadlines.add(listener("c", heard, testScheduler), 300);
    expect(counts.armed).toBe(1);
    testScheduler.flush();
    expect(heard).toStrictEqual(["a@100", "b@100", "c@300"]);
    // One timer for a and b, one more for c.
    expect(counts.armed).toBe(2);
  });

  it("moves the timer for a call with an earlier deadline", () => {
    const { testScheduler, scheduler, counts } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    deadlines.add(listener("slow", heard, testScheduler), 500);
    deadlines.add(listener("fast", heard, testScheduler), 50);
    testScheduler.flush();
    expect(heard).toStrictEqual(["fast@50", "slow@500"]);
    expect(counts.armed).toBe(3);
  });

  it("tells nobody who left, and keeps the timer when the last call leaves: it fires for nothing and is not armed again", () => {
    const { testScheduler, scheduler, counts } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    const first = listener("first", heard, testScheduler);
    const second = listener("second", heard, testScheduler);
    deadlines.add(first, 100);
    deadlines.add(second, 200);
    deadlines.remove(first);
    testScheduler.flush();
    expect(heard).toStrictEqual(["second@200"]);
    expect(counts.armed).toBe(2);
    deadlines.add(first, 100);
    deadlines.remove(first);
    expect(testScheduler.actions).toHaveLength(1);
    testScheduler.flush();
    expect(heard).toStrictEqual(["second@200"]);
    expect(testScheduler.now()).toBe(300);
    expect(counts.armed).toBe(3);
  });

  it("serves a later call with the timer armed for one that left, at the later call's own deadline", () => {
    const { testScheduler, scheduler, counts } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    const early = listener("early", heard, testScheduler);
    deadlines.add(early, 100);
    testScheduler.schedule(() => {
      deadlines.remove(early);
      deadlines.add(listener("later", heard, testScheduler), 100);
    }, 30);
    testScheduler.flush();
    expect(heard).toStrictEqual(["later@130"]);
    // Armed at 0 for 100, and at 100 again for 130: the later call's start armed nothing.
    expect(counts.armed).toBe(2);
  });

  it("cancels the timer on unsubscribe, tells nobody after, and is never armed again", () => {
    const { testScheduler, scheduler, counts } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    deadlines.add(listener("a", heard, testScheduler), 100);
    deadlines.unsubscribe();
    expect(testScheduler.actions).toStrictEqual([]);
    deadlines.add(listener("b", heard, testScheduler), 10);
    expect(testScheduler.actions).toStrictEqual([]);
    testScheduler.flush();
    expect(heard).toStrictEqual([]);
    expect(counts.armed).toBe(1);
  });

  it("tells no call after an unsubscribe that comes while it tells the expired ones (the run ends with a call's timeout)", () => {
    const { testScheduler, scheduler } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    deadlines.add(
      {
        timedOut: () => {
          heard.push(`last@${testScheduler.now()}`);
          deadlines.unsubscribe();
        },
      },
      10,
    );
    deadlines.add(listener("torn down", heard, testScheduler), 10);
    deadlines.add(listener("later", heard, testScheduler), 50);
    testScheduler.flush();
    expect(heard).toStrictEqual(["last@10"]);
    expect(testScheduler.now()).toBe(10);
  });

  it("serves a call that starts while others time out", () => {
    const { testScheduler, scheduler } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    const late = listener("late", heard, testScheduler);
    deadlines.add(
      {
        timedOut: () => {
          heard.push(`early@${testScheduler.now()}`);
          deadlines.add(late, 30);
        },
      },
      10,
    );
    testScheduler.flush();
    expect(heard).toStrictEqual(["early@10", "late@40"]);
  });

  it("tells a call with no time to run that starts while others time out in the same round", () => {
    const { testScheduler, scheduler } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    const instant = listener("instant", heard, testScheduler);
    deadlines.add(
      {
        timedOut: () => {
          heard.push(`early@${testScheduler.now()}`);
          deadlines.add(instant, 0);
        },
      },
      10,
    );
    deadlines.add(listener("next", heard, testScheduler), 10);
    testScheduler.flush();
    expect(heard).toStrictEqual(["early@10", "next@10", "instant@10"]);
  });

  it("keeps its list whole as calls leave from the front, the middle and the back", () => {
    const { testScheduler, scheduler } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    const calls = ["a", "b", "c", "d", "e"].map((name) => listener(name, heard, testScheduler));
    for (const call of calls) deadlines.add(call, 10);
    deadlines.remove(calls[0]!);
    deadlines.remove(calls[2]!);
    deadlines.remove(calls[4]!);
    deadlines.remove(calls[4]!);
    new ToolDeadlines(scheduler).remove(calls[1]!);
    testScheduler.flush();
    expect(heard).toStrictEqual(["b@10", "d@10"]);
  });

  it("does not tell a call that one told before it added again with a later deadline", () => {
    const { testScheduler, scheduler } = countingScheduler();
    const deadlines = new ToolDeadlines(scheduler);
    const heard: string[] = [];
    const moved = listener("moved", heard, testScheduler);
    deadlines.add(
      {
        timedOut: () => {
          heard.push(`first@${testScheduler.now()}`);
          deadlines.remove(moved);
          deadlines.add(moved, 30);
        },
      },
      10,
    );
    deadlines.add(moved, 10);
    testScheduler.flush();
    expect(heard).toStrictEqual(["first@10", "moved@40"]);
  });
});
