import { Observable, of } from "rxjs";
import { describe, expect, it } from "vitest";
import { Trampoline } from "../../src/operators/trampoline.js";
import { marbles } from "../helpers/marbles.js";

/**
 * The smallest sequencer on a Trampoline: subscribes `steps` one after the other, each once the
 * one before completed, as the loop's sequencers do (play-turns.ts, prepare-tool-call.ts).
 */
function inSequence<T>(steps: readonly Observable<T>[]): Observable<T> {
  return new Observable<T>((subscriber) => {
    let next = 0;
    let stepRunning = false;
    const sequencer = {
      loop: () => {
        while (!stepRunning && next < steps.length && !subscriber.closed) {
          stepRunning = true;
          subscriber.add(
            steps[next++]!.subscribe({
              next: (value) => subscriber.next(value),
              error: (error: unknown) => subscriber.error(error),
              complete: () => {
                stepRunning = false;
                trampoline.run();
              },
            }),
          );
        }
        if (!stepRunning && next === steps.length) subscriber.complete();
      },
    };
    const trampoline = new Trampoline(sequencer);
    trampoline.run();
  });
}

describe("Trampoline", () => {
  it(
    "subscribes each step once the one before completed, synchronous steps in the same frame",
    marbles((m) => {
      const a = m.cold("a-|");
      const b = m.cold("(b|)");
      const c = m.cold("--c|");
      const d = m.cold("#");
      m.expect(inSequence([a, b, c])).toBeObservable("a-b-c|");
      m.expect(a).toHaveSubscriptions("^-!");
      m.expect(b).toHaveSubscriptions("--(^!)");
      m.expect(c).toHaveSubscriptions("--^--!");
      const e = m.cold("(e|)");
      const never = m.cold("f|");
      m.expect(inSequence([e, d, never])).toBeObservable("(e#)");
      m.expect(never).toHaveSubscriptions([]);
    }),
  );

  it("runs 10,000 steps that complete synchronously at one stack depth", () => {
    const depths = new Set<number>();
    const traceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = Infinity;
    const steps = Array.from({ length: 10_000 }, (_, index) =>
      index % 1000 === 0 ? new Observable<number>((subscriber) => (depths.add(new Error().stack!.split("\n").length), subscriber.complete())) : of(index),
    );
    let values = 0;
    let completed = false;
    try {
      inSequence(steps).subscribe({ next: () => (values += 1), complete: () => (completed = true) });
    } finally {
      Error.stackTraceLimit = traceLimit;
    }
    expect([values, completed, depths.size]).toStrictEqual([9_990, true, 1]);
  });

  it("goes round once more for a run asked from inside the loop, and the next run starts a loop anew", () => {
    const calls: string[] = [];
    let inner = 2;
    const sequencer = {
      loop: () => {
        calls.push("loop");
        if (inner-- > 0) trampoline.run();
        calls.push("return");
      },
    };
    const trampoline = new Trampoline(sequencer);
    trampoline.run();
    expect(calls).toStrictEqual(["loop", "return", "loop", "return", "loop", "return"]);
    trampoline.run();
    expect(calls.length).toBe(8);
  });

  it("is ready for the next run after the loop threw", () => {
    let loops = 0;
    const trampoline = new Trampoline({
      loop: () => {
        loops += 1;
        if (loops === 1) throw new Error("loop failed");
      },
    });
    expect(() => trampoline.run()).toThrow("loop failed");
    trampoline.run();
    expect(loops).toBe(2);
  });
});
