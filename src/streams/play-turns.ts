import { expand, Observable, Subscriber } from "rxjs";
import { reserveFinalizerSlots } from "../operators/finalizer-slot.js";
import { Trampoline, type TrampolinedLoop } from "../operators/trampoline.js";
import type { AgentEvent } from "../types.js";
import type { NextTurnStep, TurnStart } from "./next-step.js";
import type { RunState } from "./run-state.js";
import type { TurnOutput } from "./run-turn.js";

/** Makes a turn's Observable from how it starts (`runTurn`). */
export type StartTurn = (run: RunState, start: TurnStart) => Observable<TurnOutput>;

/**
 * Plays a run's turns (made by `startTurn`, `runTurn` in a run) as an `expand` over their
 * decisions, from the turn `first` starts: a turn's events go on to the run's subscriber as they
 * come, and its decision to go on (a `next_turn` step, its last value) goes to `expand` as the turn
 * completes; `expand` recurses on it: the step starts the next turn. A turn that ends the run
 * (`agent_end`) decides nothing, and the loop completes with it.
 *
 * ```text
 * T1 (expand's source):  agent_start … turn_end (N2|)
 * T2 (projected from N2):                         turn_start … turn_end agent_end|
 * output:                agent_start … turn_end   turn_start … turn_end agent_end|
 * ```
 *
 * One turn at a time: a decision reaches `expand` only as its turn completes, and `expand(…, 1)`
 * keeps a later turn's decision in its buffer until that turn's subscription has ended.
 * Trampolined (`Trampoline`): a turn is subscribed from the loop of the run's one trampoline, never
 * inside the call stack of the turn before, even when a model answers synchronously (the
 * constant-stack-depth tests in agent-loop.test.ts and here guard this).
 * Why not `expand`'s own scheduler argument for it: a subscription it schedules for later does not
 * count as running, so `expand` completes early when its source has completed meanwhile (rxjs
 * 7.8's `mergeInternals`); here `expand` counts the turn from the moment it projects it.
 *
 * Why `expand` over the steps and not over the turns' events: `expand` projects every value it
 * emits, and an inner subscription per event (an `EMPTY` for each) added about 130 ns to each text
 * delta in a standalone loop, about what a delta costs the whole loop now (bench W1).
 */
export function playTurns(run: RunState, first: TurnStart, startTurn: StartTurn): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    const turns = new TurnSequence(run, startTurn, subscriber);
    // The sequence is linked to the run's subscriber as it is made, and each subscriber of the
    // chain to the one after it as it is made, all before the first turn emits: a subscriber that
    // leaves as the first turn's opening events are emitted (synchronously, within this call)
    // stops that turn before its model call. The first turn is expand's source, not a projection
    // of its own: a run allocates one inner subscription less (about 0.8 µs of a 13 µs two-turn
    // run, bench W5's conversation in a loop).
    turns.decisionOf(first).pipe(expand(turns.decisionOf, 1)).subscribe(turns);
  });
}

/**
 * What a run's turns share: how to start one, where their events go, and the trampoline that
 * subscribes them. It is also the loop's own subscriber of the steps `expand` emits: the run's
 * subscriber (its `destination`) hears the turns' events only, and the loop's end. Why not
 * `ignoreElements()` or a subscriber of its own for that: what a run waiting for its model holds
 * (heap snapshots of bench W5's waiting runs): `ignoreElements`'s closure and context were about
 * 130 bytes more, a subscriber of its own 24 (72 bytes against the 48 its fields add here).
 */
class TurnSequence extends Subscriber<NextTurnStep> implements TrampolinedLoop {
  private readonly trampoline = new Trampoline(this);
  /** The turn `expand` projected last, until the trampoline subscribes it. */
  private waiting: TurnOutputs | undefined;

  constructor(
    private readonly run: RunState,
    private readonly startTurn: StartTurn,
    readonly events: Subscriber<AgentEvent>,
  ) {
    super(events);
    // expand's finalizer (rxjs's mergeInternals), its subscriber of the turn before and, from
    // the second turn on, of the next, until the one before leaves (see reserveFinalizerSlots).
    reserveFinalizerSlots(this, 3);
  }

  /**
   * The turn `start` starts, as an Observable of its decision (`expand`'s source and projection).
   * Why a function bound to the sequence and not an arrow in `playTurns`: `expand` keeps its
   * projection for the whole run, and an arrow there would keep `first`, with the run's opening
   * events, alive. Why bound rather than an arrow field: 48 bytes less a run (an arrow keeps a
   * context for `this`, a bound function holds `this` itself).
   */
  readonly decisionOf: (start: TurnStart) => Observable<NextTurnStep> = this.turnDecision.bind(this);

  /** Subscribes the turn now, or, while a turn is being subscribed, as soon as that returns. */
  play(turn: TurnOutputs): void {
    this.waiting = turn;
    this.trampoline.run();
  }

  loop(): void {
    const turn = this.waiting;
    this.waiting = undefined;
    // A turn unsubscribed while it waited (the run's subscriber left) never starts.
    if (turn !== undefined && !turn.closed) this.startTurn(this.run, turn.takeStart()).subscribe(turn);
  }

  /** The steps reached `expand`, which started their turns; the run's subscriber does not hear them. */
  protected override _next(): void {}

  private turnDecision(start: TurnStart): Observable<NextTurnStep> {
    return new TurnDecision(start, this);
  }
}

/**
 * A turn as `expand` sees it: an Observable of its decision to go on, the one value it emits;
 * its events go to the run's subscriber as they come. Why a subclass with a static subscribe
 * function rather than `new Observable` with a closure: one object fewer per turn (as `ToolCallRun`).
 */
class TurnDecision extends Observable<NextTurnStep> {
  constructor(
    private readonly start: TurnStart,
    private readonly turns: TurnSequence,
  ) {
    super(TurnDecision.play);
  }

  private static play(this: Observable<NextTurnStep>, decisions: Subscriber<NextTurnStep>): void {
    const { start, turns } = this as TurnDecision;
    // expand's subscriber of the turn holds the turn's subscriber alone (see reserveFinalizerSlots).
    reserveFinalizerSlots(decisions, 1);
    turns.play(new TurnOutputs(decisions, turns.events, start));
  }
}

/**
 * The subscriber of one turn's output: its events to the run's subscriber, its decision to
 * `expand`. Linked to `expand`'s inner subscriber (its `destination`), so the turn stops with it.
 */
class TurnOutputs extends Subscriber<TurnOutput> {
  private decision: NextTurnStep | undefined;

  constructor(
    decisions: Subscriber<NextTurnStep>,
    private readonly events: Subscriber<AgentEvent>,
    private start: TurnStart | undefined,
  ) {
    super(decisions);
    // The turn's model call, then its tools' batch (see reserveFinalizerSlots).
    reserveFinalizerSlots(this, 2);
  }

  /**
   * How the turn starts, handed over once. Why not kept: the first turn's start holds the run's
   * opening events, about 340 bytes that a run waiting for its model held (heap snapshots of
   * bench W5's 1,000 waiting runs).
   */
  takeStart(): TurnStart {
    const start = this.start!;
    this.start = undefined;
    return start;
  }

  protected override _next(output: TurnOutput): void {
    if (output.type !== "next_turn") {
      this.events.next(output);
      return;
    }
    if (this.decision !== undefined) {
      this.error(new Error("rxagent internal error: a turn decided to go on twice"));
      return;
    }
    this.decision = output;
  }

  /** The decision goes to `expand` as the turn completes: the next turn starts after this one, never inside it. */
  protected override _complete(): void {
    const decision = this.decision;
    this.decision = undefined;
    if (decision !== undefined) this.destination.next(decision);
    super._complete();
  }
}
