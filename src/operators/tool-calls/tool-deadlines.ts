import type { SchedulerLike, Subscription, Unsubscribable } from "rxjs";

/** What a running call does when its time is up. */
export interface DeadlineListener {
  timedOut(): void;
}

/**
 * Whoever keeps the one `ToolDeadlines` its batches share (a run, run-state.ts), and cancels it
 * (`unsubscribe`) once it runs no more batches.
 */
export interface ToolDeadlinesOwner {
  /** Made by the first call that needs a limit: a run whose calls all answer synchronously never has one (bench W5). */
  toolDeadlines?: ToolDeadlines | undefined;
}

/** The owner's `ToolDeadlines`, made now if this is the first call that needs one. */
export function toolDeadlinesOf(owner: ToolDeadlinesOwner, scheduler: SchedulerLike): ToolDeadlines {
  return (owner.toolDeadlines ??= new ToolDeadlines(scheduler));
}

/**
 * The time limits of one run's running calls, all its batches', served by one scheduler timer.
 *
 * The timer is armed for the earliest deadline and moved only when a call with an earlier one
 * comes; when it fires, every call whose deadline has passed is told, in the order the calls
 * started, and it is armed again for the earliest one left, if any. A call that leaves does not
 * move it, nor does the last one: the timer armed for a call that answered fires for nothing and
 * is armed again for the calls that came since. It is cancelled only by `unsubscribe`, as the
 * run ends, so no timer outlives the run.
 *
 * Why not a timer per call: with the default 3-minute limit every call that answers with a
 * Promise armed and cancelled a timer of its own (an rxjs action and a Node `setInterval`),
 * which was the largest cost of such a call (issue 22). Why not one per batch, cancelled as
 * its last call leaves: that was still one per turn, about a tenth of the CPU of a fresh
 * process's first tool-heavy run (bench/README.md, "Cold starts"), and the next turn's calls
 * came with later deadlines than the one it was armed for.
 */
export class ToolDeadlines implements Unsubscribable {
  // Made by the first call that needs a limit.
  private deadlines: Map<DeadlineListener, number> | undefined;
  private timer: Subscription | undefined;
  private armedFor = Infinity;

  constructor(private readonly scheduler: SchedulerLike) {}

  /** Tells `listener` once `timeoutMs` from `startedAt` (by default now) has passed, unless it is removed first. */
  add(listener: DeadlineListener, timeoutMs: number, startedAt = this.scheduler.now()): void {
    const deadline = startedAt + timeoutMs;
    (this.deadlines ??= new Map()).set(listener, deadline);
    if (deadline < this.armedFor) this.arm(deadline);
  }

  remove(listener: DeadlineListener): void {
    this.deadlines?.delete(listener);
  }

  /** Cancels the timer for good and forgets every deadline: the owner runs no more calls. */
  unsubscribe(): void {
    this.timer?.unsubscribe();
    this.timer = undefined;
    // Cleared, not dropped: the run may end while `fire` goes through the map (the last call's
    // timeout ends it), and the calls torn down with it must not be told after.
    this.deadlines?.clear();
    // No deadline is earlier: nothing arms it again.
    this.armedFor = -Infinity;
  }

  private arm(deadline: number): void {
    this.timer?.unsubscribe();
    this.armedFor = deadline;
    this.timer = this.scheduler.schedule(() => this.fire(), Math.max(0, deadline - this.scheduler.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = this.scheduler.now();
    // The timer is armed only by `add`, which made the map, and `unsubscribe` cancels it.
    const deadlines = this.deadlines!;
    // A listener that times out leaves (remove) while this loop runs; a Map skips what was deleted.
    for (const [listener, deadline] of deadlines) {
      if (deadline > now) continue;
      deadlines.delete(listener);
      listener.timedOut();
    }
    let earliest = Infinity;
    for (const deadline of deadlines.values()) earliest = Math.min(earliest, deadline);
    if (earliest < this.armedFor) this.arm(earliest);
  }
}
