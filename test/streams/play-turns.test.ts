import { Observable, take } from "rxjs";
import { describe, expect, it } from "vitest";
import type { NextTurnStep, TurnStart } from "../../src/streams/next-step.js";
import { playTurns } from "../../src/streams/play-turns.js";
import type { RunState } from "../../src/streams/run-state.js";
import type { TurnOutput } from "../../src/streams/run-turn.js";
import type { AgentEvent } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";
import { userMessage } from "../testing/fixtures.js";

/** An event told apart by its label. */
const mark = (label: string): AgentEvent => ({ type: "agent_end", messages: [], reason: "idle", errorMessage: label });
/** A turn's decision to go on, told apart by its pending message's text. */
const goOn = (label: string): NextTurnStep => ({ type: "next_turn", pending: [userMessage(label)] });
const labelOf = (start: TurnStart): string => {
  if (start.type === "first_turn") return "first";
  const message = start.pending[0]!;
  return message.role === "user" ? String(message.content) : "";
};
const run = {} as RunState;
const first: TurnStart = { type: "first_turn", opening: [] };

describe("playTurns", () => {
  it(
    "plays the turn a decision starts once the deciding turn completed, and completes after a turn that hands nothing on",
    marbles((m) => {
      const values = { a: mark("a"), b: mark("b"), c: mark("c"), d: mark("d") };
      const turns: Record<string, Observable<TurnOutput>> = {
        first: m.cold<TurnOutput>("a 9ms b 9ms (n|)", { ...values, n: goOn("second") }),
        second: m.cold<TurnOutput>("c 9ms (d|)", values),
      };
      const started: unknown[] = [];
      const startTurn = (startedBy: RunState, start: TurnStart) => {
        started.push(startedBy, labelOf(start));
        return turns[labelOf(start)]!;
      };
      m.expect(playTurns(run, first, startTurn)).toBeObservable("a 9ms b 9ms c 9ms (d|)", values);
      m.expect(turns.first!).toHaveSubscriptions("^ 19ms !");
      m.expect(turns.second!).toHaveSubscriptions("20ms ^ 9ms !");
      m.flush();
      expect(started).toStrictEqual([run, "first", run, "second"]);
    }),
  );

  it(
    "tears the playing turn down on unsubscribe, and passes a turn's error on",
    marbles((m) => {
      const values = { a: mark("a") };
      const playing = m.cold<TurnOutput>("a 30ms |", values);
      m.expect(playTurns(run, first, () => playing), "^ 9ms !").toBeObservable("a", values);
      m.expect(playing).toHaveSubscriptions("^ 9ms !");
      const failing = m.cold<TurnOutput>("a 4ms #", values, new Error("broken"));
      m.expect(playTurns(run, first, () => failing)).toBeObservable("a 4ms #", values, new Error("broken"));
    }),
  );

  it(
    "fails the run, and stops the turn, when a turn decides to go on twice",
    marbles((m) => {
      const values = { a: mark("a") };
      const turn = m.cold<TurnOutput>("a n n 5ms |", { ...values, n: goOn("second") });
      m.expect(playTurns(run, first, () => turn)).toBeObservable(
        "a 1ms #",
        values,
        new Error("rxagent internal error: a turn decided to go on twice"),
      );
      m.expect(turn).toHaveSubscriptions("^ 1ms !");
    }),
  );

  it(
    "plays every turn when the first ends later and the turns after it decide synchronously",
    marbles((m) => {
      // expand's own scheduler argument, trampolining the same turns, completed the loop after
      // the second turn: the third waited in the scheduler's queue, uncounted, while expand's
      // source had long completed.
      const values = { a: mark("a"), b: mark("b"), c: mark("c") };
      const synchronousTurn = (label: string, next?: string) =>
        new Observable<TurnOutput>((subscriber) => {
          subscriber.next(mark(label));
          if (next !== undefined) subscriber.next(goOn(next));
          subscriber.complete();
        });
      const turns: Record<string, Observable<TurnOutput>> = {
        first: m.cold<TurnOutput>("a 9ms (n|)", { ...values, n: goOn("second") }),
        second: synchronousTurn("b", "third"),
        third: synchronousTurn("c"),
      };
      m.expect(playTurns(run, first, (_run, start) => turns[labelOf(start)]!)).toBeObservable("a 9ms (bc|)", values);
    }),
  );

  it("stops the first turn when its subscriber leaves as the turn emits synchronously", () => {
    let closedAfterFirst: boolean | undefined;
    const events = new Observable<TurnOutput>((subscriber) => {
      subscriber.next(mark("a"));
      closedAfterFirst = subscriber.closed;
      subscriber.next(mark("b"));
    });
    const seen: string[] = [];
    playTurns(run, first, () => events)
      .pipe(take(1))
      .subscribe((event) => seen.push(event.type === "agent_end" ? event.errorMessage! : event.type));
    expect([seen, closedAfterFirst]).toStrictEqual([["a"], true]);
  });

  it("plays 20,000 turns that decide synchronously without nesting them on the stack", () => {
    const count = 20_000;
    let played = 0;
    const depths = new Set<number>();
    const traceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = Infinity;
    const turn = () =>
      new Observable<TurnOutput>((subscriber) => {
        played += 1;
        if (played % 1000 === 0) depths.add(new Error().stack!.split("\n").length);
        if (played < count) subscriber.next(goOn("next"));
        subscriber.complete();
      });
    let completed = false;
    try {
      playTurns(run, first, turn).subscribe({ complete: () => (completed = true) });
    } finally {
      Error.stackTraceLimit = traceLimit;
    }
    expect([played, completed, depths.size]).toStrictEqual([count, true, 1]);
  });
});
