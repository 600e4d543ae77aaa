import { Observable, type Observer, type Subscriber, type TeardownLogic } from "rxjs";
import type { AgentEvent, AgentMessage } from "../types.js";
import type { TurnContinuation } from "./run-state.js";

/** A turn as the loop's expand sees it: its events, then (maybe) the turn after it. */
export interface Turn {
  events: Observable<AgentEvent>;
  next: NextTurn;
}

/**
 * Where a turn hands on what the next turn starts with (as an Observer), and where the loop's
 * `expand` picks up the next turn (as an Observable): once the turn completes it, it emits the
 * next turn, made by `startTurn` from what was handed on, or nothing, then completes.
 *
 * Why not an AsyncSubject and a `map`: a run waiting for its model holds one of these, and one
 * object with its single subscriber costs about a kilobyte less than a subject, its subscription
 * and an operator. Why it keeps what was handed on and not the next turn: that turn would hold
 * its own `NextTurn`, and every turn of a run would stay reachable from the first.
 */
export class NextTurn extends Observable<Turn> implements Observer<TurnContinuation> {
  handedOn: TurnContinuation | undefined;
  failure: { error: unknown } | undefined;
  done = false;
  waiting: Subscriber<Turn> | undefined;

  constructor(readonly startTurn: (pending: AgentMessage[]) => Turn) {
    super(serveNextTurn);
  }

  next(continuation: TurnContinuation): void {
    this.handedOn = continuation;
  }

  error(error: unknown): void {
    this.failure = { error };
    this.settle();
  }

  complete(): void {
    this.settle();
  }

  /** Hands the outcome to the subscriber, if there is one yet. */
  settle(): void {
    this.done = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) deliver(this, waiting);
  }
}

function serveNextTurn(this: Observable<Turn>, subscriber: Subscriber<Turn>): TeardownLogic {
  const nextTurn = this as NextTurn;
  if (nextTurn.done) {
    deliver(nextTurn, subscriber);
    return undefined;
  }
  nextTurn.waiting = subscriber;
  return () => {
    if (nextTurn.waiting === subscriber) nextTurn.waiting = undefined;
  };
}

function deliver(nextTurn: NextTurn, subscriber: Subscriber<Turn>): void {
  if (nextTurn.failure) {
    subscriber.error(nextTurn.failure.error);
    return;
  }
  if (nextTurn.handedOn) subscriber.next(nextTurn.startTurn(nextTurn.handedOn.pending));
  subscriber.complete();
}
