/**
 * Runs a sequencer's step loop so that a step which completes synchronously never starts the
 * next step inside its own call stack: `run` called from within the loop (by the completion
 * handler of a step the loop just subscribed) only asks the loop to go round once more.
 *
 * Why one helper: the loop's sequencers (the turns of a run, which its `expand` projects one after
 * the other, and the preparation of a batch's calls) each subscribe the next step when the one
 * before completed, and a model or a hook that answers synchronously would nest every step in the
 * one before (10,000 turns overflowed the stack before turns were trampolined); each kept its own
 * pair of flags for it. rxjs's `expand(…, 1)` and `concatMap` wait for the step before as well, but
 * subscribe the next one inside its completion (`mergeInternals`), so the stack still grows.
 *
 * The sequencer's `loop` subscribes whatever steps it can (it decides from its own state which),
 * and returns. Why an object with a method and not a closure: a run waiting for its model holds
 * its turns' trampoline, and a closure with its context is about 100 bytes more (bench W5).
 *
 * ```text
 * run()                 loop: subscribe A, A completes at once → run() → marked, returns
 *                       loop returns; marked → loop again: subscribe B …
 * ```
 */
export class Trampoline {
  private looping = false;
  private again = false;

  constructor(private readonly sequencer: TrampolinedLoop) {}

  /** Runs `loop` now, or, when called from inside it, once more as soon as it returns. */
  run(): void {
    if (this.looping) {
      this.again = true;
      return;
    }
    this.looping = true;
    try {
      do {
        this.again = false;
        this.sequencer.loop();
      } while (this.again);
    } finally {
      this.looping = false;
    }
  }
}

/** A sequencer whose step loop a `Trampoline` runs. */
export interface TrampolinedLoop {
  loop(): void;
}
