import { AsyncSubject, EMPTY, expand, Observable, of, Subject, take } from "rxjs";
import { describe, expect, it } from "vitest";
import type { NextTurn, Turn } from "../../src/streams/next-turn.js";
import { playTurns } from "../../src/streams/play-turns.js";
import type { AgentEvent } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";

/** An event told apart by its label. */
const mark = (label: string): AgentEvent => ({ type: "agent_end", messages: [], reason: "idle", errorMessage: label });

/** A turn as the loop makes them: its events, and where its next turn (if any) is handed on. */
function turn(events: Observable<AgentEvent>, next: Observable<Turn> = EMPTY): Turn {
  return { events, next: next as NextTurn };
}

describe("playTurns", () => {
  it(
    "plays each turn once the turn before completed, though it was handed on earlier",
    marbles((m) => {
      const values = { a: mark("a"), b: mark("b"), c: mark("c"), d: mark("d") };
      const first = m.cold<AgentEvent>("a 9ms b 9ms |", values);
      const second = m.cold<AgentEvent>("c 9ms (d|)", values);
      //               T2 is handed on at frame 5, while T1 still plays until frame 20
      const turns$ = m.cold<Turn>("(t 4ms u|)", { t: turn(first), u: turn(second) });
      m.expect(turns$.pipe(playTurns())).toBeObservable("a 9ms b 9ms c 9ms (d|)", values);
      m.expect(first).toHaveSubscriptions("^ 19ms !");
      m.expect(second).toHaveSubscriptions("20ms ^ 9ms !");
    }),
  );

  it(
    "tears the playing turn down on unsubscribe, and passes a turn's error on",
    marbles((m) => {
      const values = { a: mark("a") };
      const playing = m.cold<AgentEvent>("a 30ms |", values);
      m.expect(of(turn(playing)).pipe(playTurns()), "^ 9ms !").toBeObservable("a", values);
      m.expect(playing).toHaveSubscriptions("^ 9ms !");
      const failing = m.cold<AgentEvent>("a 4ms #", values, new Error("broken"));
      m.expect(of(turn(failing)).pipe(playTurns())).toBeObservable("a 4ms #", values, new Error("broken"));
    }),
  );

  it("stops the first turn when its subscriber leaves as the turn emits synchronously", () => {
    let closedAfterFirst: boolean | undefined;
    const events = new Observable<AgentEvent>((subscriber) => {
      subscriber.next(mark("a"));
      closedAfterFirst = subscriber.closed;
      subscriber.next(mark("b"));
    });
    const seen: string[] = [];
    of(turn(events))
      .pipe(playTurns(), take(1))
      .subscribe((event) => seen.push(event.type === "agent_end" ? event.errorMessage! : event.type));
    expect([seen, closedAfterFirst]).toStrictEqual([["a"], true]);
  });

  it("plays a turn only after expand subscribed to its next turn: a turn that decides at once is not lost", () => {
    // `next` is a plain Subject: what it emits before expand subscribes to it is gone.
    const seen: string[] = [];
    const make = (index: number): Turn => {
      const next = new Subject<Turn>();
      const events = new Observable<AgentEvent>((subscriber) => {
        subscriber.next(mark(`turn ${index}`));
        if (index < 3) next.next(make(index + 1));
        next.complete();
        subscriber.complete();
      });
      return turn(events, next);
    };
    of(make(1))
      .pipe(
        expand((current) => current.next),
        playTurns(),
      )
      .subscribe({ next: (event) => seen.push(event.type === "agent_end" ? event.errorMessage! : event.type), complete: () => seen.push("complete") });
    expect(seen).toStrictEqual(["turn 1", "turn 2", "turn 3", "complete"]);
  });

  it("plays 20,000 turns that decide synchronously without nesting them on the stack", () => {
    const count = 20_000;
    let played = 0;
    const make = (index: number): Turn => {
      const next = new AsyncSubject<Turn>();
      const events = new Observable<AgentEvent>((subscriber) => {
        played += 1;
        if (index < count) next.next(make(index + 1));
        next.complete();
        subscriber.complete();
      });
      return turn(events, next);
    };
    let completed = false;
    of(make(1))
      .pipe(
        expand((current) => current.next),
        playTurns(),
      )
      .subscribe({ complete: () => (completed = true) });
    expect([played, completed]).toStrictEqual([count, true]);
  });
});
