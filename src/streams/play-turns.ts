import { Observable, type Observer, type OperatorFunction, type Subscriber, Subscription } from "rxjs";
import type { AgentEvent } from "../types.js";
import type { Turn } from "./next-turn.js";

/**
 * Plays the turns of a loop's `expand` one after the other: emits each turn's events in order,
 * subscribing to a turn once the one before has completed, and completes when the turns have.
 *
 * Turns are trampolined: a turn is never subscribed inside the call stack of the one before,
 * even when a model answers synchronously (the constant-stack-depth test in agent-loop.test.ts guards this), and never before
 * `expand` has subscribed to the turn's `next` (a turn that decides at once hands its next turn
 * on to a subscriber that is already there).
 *
 * Why not `concatMap` and `subscribeOn(queueScheduler)` (its shape before): a run waiting for
 * its model held their subscribers, closures, queued actions and arrays, about 2 KB per run
 * (bench W5, heap per waiting session), and every event passed through one more subscriber.
 * A turn is handed on only once the turn before has decided, just before it completes, so one
 * slot holds the turn waiting to play.
 */
export function playTurns(): OperatorFunction<Turn, AgentEvent> {
  return (turns$) =>
    new Observable<AgentEvent>((subscriber) => {
      const player = new TurnPlayer(subscriber);
      // Linked first: a subscriber that leaves as the first turn's opening events are emitted
      // (synchronously, within this call) must stop that turn before its model call.
      subscriber.add(player);
      // Trampolined from the start: the first turn plays only once expand has subscribed to its `next`.
      player.playing = true;
      turns$.subscribe(player);
      player.playing = false;
      player.play();
    });
}

/** The observer of the turns: holds the turn waiting to play and the one playing. */
class TurnPlayer extends Subscription implements Observer<Turn> {
  playing = false;
  private waiting: Turn | undefined;
  private current: TurnEvents | undefined;
  private turnsComplete = false;

  constructor(readonly destination: Subscriber<AgentEvent>) {
    super();
  }

  next(turn: Turn): void {
    if (this.closed) return;
    if (this.waiting !== undefined) {
      this.error(new Error("rxagent internal error: a turn was handed on before the turn waiting to play began"));
      return;
    }
    this.waiting = turn;
    this.play();
  }

  error(error: unknown): void {
    if (this.closed) return;
    this.destination.error(error);
    this.unsubscribe();
  }

  complete(): void {
    if (this.closed) return;
    this.turnsComplete = true;
    this.play();
  }

  /** Subscribes to waiting turns while none plays; called again by whoever frees the slot. */
  play(): void {
    if (this.playing) return;
    this.playing = true;
    while (this.waiting !== undefined && this.current === undefined && !this.closed) {
      const turn = this.waiting;
      this.waiting = undefined;
      const events = new TurnEvents(this);
      this.current = events;
      turn.events.subscribe(events);
    }
    this.playing = false;
    if (this.turnsComplete && this.waiting === undefined && this.current === undefined && !this.closed) {
      this.destination.complete();
      this.unsubscribe();
    }
  }

  // Why the playing turn is a field torn down here and not one of the player's finalizers: a
  // finalizer that leaves early is spliced out of an array, an array allocated per turn.
  override unsubscribe(): void {
    if (this.closed) return;
    super.unsubscribe();
    this.current?.unsubscribe();
  }

  /** The playing turn completed: the next one may play. */
  turnEnded(events: TurnEvents): void {
    if (this.current === events) this.current = undefined;
    this.play();
  }
}

/**
 * The subscriber of one turn's events: passes them to the run's subscriber. Why a `Subscription`
 * that is its own observer: rxjs takes it as the subscriber itself (see forwardingObserver).
 */
class TurnEvents extends Subscription implements Observer<AgentEvent> {
  constructor(private readonly player: TurnPlayer) {
    super();
  }

  next(event: AgentEvent): void {
    if (!this.closed) this.player.destination.next(event);
  }

  error(error: unknown): void {
    if (this.closed) return;
    this.player.error(error);
    this.unsubscribe();
  }

  complete(): void {
    if (this.closed) return;
    this.unsubscribe();
    this.player.turnEnded(this);
  }
}
