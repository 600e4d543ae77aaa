import type { SchedulerLike, Subscription } from "rxjs";

/** What a running call does when its time is up. */
export interface DeadlineListener {
  timedOut(): void;
}

/**
 * The time limits of one batch's running calls, served by one scheduler timer at a time.
 *
 * The timer is armed for the earliest deadline, moved only when a call with an earlier one
 * comes, and cancelled when the last call leaves; when it fires, every call whose deadline has
 * passed is told, in the order the calls started, and it is armed again for the earliest one
 * left. Why not a timer per call: with the default 3-minute limit every call that answers with
 * a Promise armed and cancelled a timer of its own (an rxjs action and a Node `setInterval`),
 * which was the largest cost of such a call (issue 22).
 */
export class ToolDeadlines {
  // Made by the first call that needs a limit: a batch of calls that answer synchronously never does (bench W2, W5).
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
    if (!this.deadlines?.delete(listener) || this.deadlines.size > 0) return;
    this.timer?.unsubscribe();
    this.timer = undefined;
    this.armedFor = Infinity;
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
    // The timer is armed only by `add`, which made the map.
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
