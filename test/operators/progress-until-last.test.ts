import { describe, it } from "vitest";
import { progressUntilLast, type ProgressOrLast } from "../../src/operators/progress-until-last.js";
import { marbles } from "../helpers/marbles.js";

const progress = (value: string): ProgressOrLast<string> => ({ type: "progress", value });
const last = (value: string): ProgressOrLast<string> => ({ type: "last", value, hasValue: true });

describe("progressUntilLast: a value is progress only if more follows", () => {
  it(
    "reports a value as progress when the next arrives or the scheduler gets a turn; the last value is the result",
    marbles((m) => {
      // (bc): b is reported as c arrives, c when the scheduler next gets a turn (same frame);
      // d waits a turn before the completion, so it is progress and also the result.
      const source = m.cold("-a--(bc)--d|");
      const expected = "     -p--(qr)--s(t|)";
      m.expect(source.pipe(progressUntilLast(m.scheduler))).toBeObservable(expected, {
        p: progress("a"),
        q: progress("b"),
        r: progress("c"),
        s: progress("d"),
        t: last("d"),
      });
      m.expect(source).toHaveSubscriptions("^----------!");
    }),
  );

  it(
    "drops a value that the completion follows at once: of(result) reports no progress",
    marbles((m) => {
      const source = m.cold("-(ab|)");
      m.expect(source.pipe(progressUntilLast(m.scheduler))).toBeObservable("-(pt|)", { p: progress("a"), t: last("b") });
      m.expect(source).toHaveSubscriptions("^!");
    }),
  );

  it(
    "says when the source completed with no value at all",
    marbles((m) => {
      const source = m.cold("--|");
      m.expect(source.pipe(progressUntilLast(m.scheduler))).toBeObservable("--(t|)", { t: { type: "last", value: undefined, hasValue: false } });
    }),
  );

  it(
    "reports the value held back before passing an error on",
    marbles((m) => {
      const source = m.cold("-(a#)", undefined, new Error("tool broke"));
      m.expect(source.pipe(progressUntilLast(m.scheduler))).toBeObservable("-(p#)", { p: progress("a") }, new Error("tool broke"));
    }),
  );

  it(
    "cancels its pending flush when unsubscribed: nothing after the frame it leaves",
    marbles((m) => {
      const source = m.cold("-a-b-c|");
      m.expect(source.pipe(progressUntilLast(m.scheduler)), "^--!").toBeObservable("-p-", { p: progress("a") });
      m.expect(source).toHaveSubscriptions("^--!");
    }),
  );
});
