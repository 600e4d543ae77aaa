import { Observable, type Observer, type Subscriber, Subscription } from "rxjs";
import { Trampoline, type TrampolinedLoop } from "../operators/trampoline.js";
import type { AgentEvent } from "../types.js";
import type { NextTurnStep, TurnStart } from "./next-step.js";
import type { RunState } from "./run-state.js";
import type { TurnOutput } from "./run-turn.js";

/** Makes a turn's Observable from how it starts (`runTurn`). */
export type StartTurn = (run: RunState, start: TurnStart) => Observable<TurnOutput>;

/**
 * Plays a run's turns (made by `startTurn`, `runTurn` in a run) one after the other, from
 * `first`: emits each turn's events in order, and
 * when a turn hands on its decision as its last value (a `next_turn` step, just before it
 * completes), subscribes to the turn that step starts once that turn has completed. A turn that
 * ends the run (`agent_end`) hands on nothing, and the turns complete with it.
 *
 * Turns are trampolined (`Trampoline`): a turn is never subscribed inside the call stack of the
 * one before, even when a model answers synchronously (the constant-stack-depth test in
 * agent-loop.test.ts guards this).
 *
 * Why the decision is a value on the turn's stream, and this one loop instead of an `expand`
 * over turns whose next turn a per-turn `Observer<NextStep>` (a `SettleOnce`) handed on: the
 * decision no longer leaves beside the stream, and a run holds no expand (its buffer, inner
 * subscriber, projection) and no cell per turn: heap per waiting session 5,051 B before, 3,841 B
 * after (bench W5, medians of 3 `--only W1,W2,W5` runs each on a loaded machine, 2026-12-02;
 * the reference 5,160 B and 5,175 B in the same runs). Why not `concatMap` and
 * `subscribeOn(queueScheduler)` (the shape before that): a run waiting for its model held their
 * subscribers, closures, queued actions and arrays, about 2 KB per run (bench W5, heap per
 * waiting session), and every event passed through one more subscriber.
 */
export function playTurns(run: RunState, first: TurnStart, startTurn: StartTurn): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    const player = new TurnPlayer(run, startTurn, subscriber, first);
    // Linked first: a subscriber that leaves as the first turn's opening events are emitted
    // (synchronously, within this call) must stop that turn before its model call.
    subscriber.add(player);
    player.trampoline.run();
  });
}

/** Holds the turn waiting to play (how it starts) and the one playing. */
class TurnPlayer extends Subscription implements TrampolinedLoop {
  readonly trampoline = new Trampoline(this);
  private current: TurnEvents | undefined;

  constructor(
    private readonly run: RunState,
    private readonly startTurn: StartTurn,
    readonly destination: Subscriber<AgentEvent>,
    private waiting: TurnStart | undefined,
  ) {
    super();
  }

  /** Subscribes to the waiting turn while none plays; completes once neither is left. */
  loop(): void {
    while (this.waiting !== undefined && this.current === undefined && !this.closed) {
      const start = this.waiting;
      this.waiting = undefined;
      const events = new TurnEvents(this);
      this.current = events;
      this.startTurn(this.run, start).subscribe(events);
    }
    if (this.waiting === undefined && this.current === undefined && !this.closed) {
      this.destination.complete();
      this.unsubscribe();
    }
  }

  /** The playing turn decided on another turn: it plays once the playing one has completed. */
  handOn(step: NextTurnStep): void {
    if (this.waiting !== undefined) {
      this.error(new Error("rxagent internal error: a turn was handed on before the turn waiting to play began"));
      return;
    }
    this.waiting = step;
  }

  error(error: unknown): void {
    if (this.closed) return;
    this.destination.error(error);
    this.unsubscribe();
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
    this.trampoline.run();
  }
}

/**
 * The subscriber of one turn's output: passes its events to the run's subscriber and its
 * decision to the player. Why a `Subscription` that is its own observer: rxjs takes it as the
 * subscriber itself (see forwardingObserver).
 */
class TurnEvents extends Subscription implements Observer<TurnOutput> {
  constructor(private readonly player: TurnPlayer) {
    super();
  }

  next(output: TurnOutput): void {
    if (this.closed) return;
    if (output.type === "next_turn") this.player.handOn(output);
    else this.player.destination.next(output);
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
