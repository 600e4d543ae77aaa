import type { SchedulerLike, Subscription, Unsubscribable } from "rxjs";

/**
 * What a running call does when its time is up. The other fields are `ToolDeadlines`'s own: its
 * list of calls runs through them, so adding and removing a call allocates nothing.
 */
export interface DeadlineListener {
  timedOut(): void;
  /** The `ToolDeadlines` the call is listed in, while it is. */
  deadlinesListedIn?: ToolDeadlines | undefined;
  deadline?: number;
  previousByStart?: DeadlineListener | undefined;
  nextByStart?: DeadlineListener | undefined;
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
  // The calls in the order they started. Why a list through the calls themselves and not a Map:
  // a Map grew and shrank its table as each batch's calls came and left, an allocation or two per
  // call, and its set and delete were about a third of what the calls' bookkeeping cost (bench
  // W2 with Promise tools, bench/README.md "A tool call's cost, warm").
  private first: DeadlineListener | undefined;
  private last: DeadlineListener | undefined;
  private timer: Subscription | undefined;
  private armedFor = Infinity;

  constructor(private readonly scheduler: SchedulerLike) {}

  /** Tells `listener` once `timeoutMs` from `startedAt` (by default now) has passed, unless it is removed first. */
  add(listener: DeadlineListener, timeoutMs: number, startedAt = this.scheduler.now()): void {
    const deadline = startedAt + timeoutMs;
    this.remove(listener);
    listener.deadline = deadline;
    listener.deadlinesListedIn = this;
    listener.previousByStart = this.last;
    listener.nextByStart = undefined;
    if (this.last === undefined) this.first = listener;
    else this.last.nextByStart = listener;
    this.last = listener;
    if (deadline < this.armedFor) this.arm(deadline);
  }

  remove(listener: DeadlineListener): void {
    if (listener.deadlinesListedIn !== this) return;
    const { previousByStart, nextByStart } = listener;
    if (previousByStart === undefined) this.first = nextByStart;
    else previousByStart.nextByStart = nextByStart;
    if (nextByStart === undefined) this.last = previousByStart;
    else nextByStart.previousByStart = previousByStart;
    listener.deadlinesListedIn = undefined;
    listener.previousByStart = undefined;
    listener.nextByStart = undefined;
  }

  /** Cancels the timer for good and forgets every deadline: the owner runs no more calls. */
  unsubscribe(): void {
    this.timer?.unsubscribe();
    this.timer = undefined;
    // Every call unlisted, not just the list dropped: the run may end while `fire` tells the
    // expired calls (the last call's timeout ends it), and the calls torn down with it must not
    // be told after.
    while (this.first !== undefined) this.remove(this.first);
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
    // Told in start order; a call removed by one told before it (a run that ends with a timeout),
    // or added again with a later deadline, is not told. Again while any expired: a call that
    // started meanwhile with no time to run (a limit of 0) is told in this round too.
    for (let expired = this.expiredAt(now); expired.length > 0; expired = this.expiredAt(now)) {
      for (const listener of expired) {
        if (listener.deadlinesListedIn !== this || listener.deadline! > now) continue;
        this.remove(listener);
        listener.timedOut();
      }
    }
    let earliest = Infinity;
    for (let listener = this.first; listener !== undefined; listener = listener.nextByStart) earliest = Math.min(earliest, listener.deadline!);
    if (earliest < this.armedFor) this.arm(earliest);
  }

  private expiredAt(now: number): DeadlineListener[] {
    const expired: DeadlineListener[] = [];
    for (let listener = this.first; listener !== undefined; listener = listener.nextByStart) if (listener.deadline! <= now) expired.push(listener);
    return expired;
  }
}
