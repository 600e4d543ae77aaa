/** A run's or a call's abort, readable without making an AbortSignal. */
export interface Cancellation {
  readonly aborted: boolean;
  /** Why it was aborted (the signal's `reason`), once it was. */
  readonly reason?: unknown;
  readonly signal: AbortSignal;
}

/**
 * An AbortController made only when its signal is read. Why: most runs and model calls are never
 * aborted and most hooks never look at the signal, and an AbortController is the costliest object
 * they would make. A signal read after `abort` comes back aborted, with the reason.
 */
export class LazyAbortController implements Cancellation {
  aborted = false;
  reason: unknown;
  private controller: AbortController | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** The first reason wins, as with an AbortController. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
