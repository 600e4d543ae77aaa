import type { Observable, Observer, Subscriber } from "rxjs";
import { SettleOnce } from "../operators/settle-once.js";
import type { AgentEvent } from "../types.js";
import type { NextStep, NextTurnStep } from "./next-step.js";
import type { RunState } from "./run-state.js";

/** A turn as the loop's expand sees it: its events, then (maybe) the turn after it. */
export interface Turn {
  events: Observable<AgentEvent>;
  next: NextTurn;
}

/**
 * Where a turn hands on its decision, a `NextStep` (as an Observer), and where the loop's
 * `expand` picks up the next turn (as an Observable, for one subscriber): once the turn completes
 * it, it emits the next turn, made by `startTurn` from a `next_turn` step, or nothing, then
 * completes; at once to a subscriber that comes after that.
 *
 * Why not an AsyncSubject and a `map`: a run waiting for its model holds one of these, and one
 * object serving its one subscriber costs about a kilobyte less than a subject, its subscription
 * and an operator. Why it keeps what was handed on and not the next turn: that turn would hold
 * its own `NextTurn`, and every turn of a run would stay reachable from the first.
 */
export class NextTurn extends SettleOnce<Turn> implements Observer<NextStep> {
  private handedOn: NextTurnStep | undefined;
  private failure: { error: unknown } | undefined;

  // Why a run and a module function rather than a closure over the run: a run waiting for its
  // model holds this object, and a closure with its context is about 100 bytes more.
  constructor(
    private readonly run: RunState,
    private readonly startTurn: (run: RunState, start: NextTurnStep) => Turn,
  ) {
    super();
  }

  next(step: NextStep): void {
    if (step.type === "next_turn") this.handedOn = step;
  }

  error(error: unknown): void {
    this.failure = { error };
    this.settle();
  }

  complete(): void {
    this.settle();
  }

  protected deliver(subscriber: Subscriber<Turn>): void {
    if (this.failure) {
      subscriber.error(this.failure.error);
      return;
    }
    if (this.handedOn) subscriber.next(this.startTurn(this.run, this.handedOn));
    subscriber.complete();
  }
}
