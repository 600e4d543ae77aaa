/**
 * What one process does for one session, one piece after the other: a command waits for the one
 * before it (a prompt may be taking the lease, and the command after it must find the runner it
 * made), and commands wait for a takeover or a reading of the session under way. Every task
 * handles its own failure: the queue's promises never reject.
 */
export class CommandQueue {
  private tail: Promise<void> | undefined;

  /** True while a task runs or waits. */
  get busy(): boolean {
    return this.tail !== undefined;
  }

  /** Runs `task` once every task queued before it is done. */
  push(task: () => Promise<void>): void {
    this.track((this.tail ?? Promise.resolve()).then(task));
  }

  /** Makes `work`, already under way, the last task: later ones wait for it. */
  track(work: Promise<void>): void {
    this.tail = work;
    void work.then(() => {
      if (this.tail === work) this.tail = undefined;
    });
  }

  /** Calls `then` once the tasks queued so far are done (at once, in a microtask, when none are). */
  afterCurrent(then: () => void): void {
    void (this.tail ?? Promise.resolve()).then(then);
  }
}
