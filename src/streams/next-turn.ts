import type { Observable, Observer, Subscriber } from "rxjs";
import { SettleOnce } from "../operators/settle-once.js";
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
 * object serving its one subscriber costs about a kilobyte less than a subject, its subscription
 * and an operator. Why it keeps what was handed on and not the next turn: that turn would hold
 * its own `NextTurn`, and every turn of a run would stay reachable from the first.
 */
export class NextTurn extends SettleOnce<Turn> implements Observer<TurnContinuation> {
  private handedOn: TurnContinuation | undefined;
  private failure: { error: unknown } | undefined;

  constructor(private readonly startTurn: (pending: AgentMessage[]) => Turn) {
    super();
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

  protected deliver(subscriber: Subscriber<Turn>): void {
    if (this.failure) {
      subscriber.error(this.failure.error);
      return;
    }
    if (this.handedOn) subscriber.next(this.startTurn(this.handedOn.pending));
    subscriber.complete();
  }
}
