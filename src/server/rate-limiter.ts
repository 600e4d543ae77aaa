/** How many commands one connection may send: a burst, refilled at a steady rate. */
export interface RateLimitOptions {
  /** Commands allowed at once. Default 20. */
  burst?: number;
  /** Commands regained per second. Default 10. */
  perSecond?: number;
  /**
   * A connection whose commands are refused this many times in a row is closed (1008): it is
   * flooding, not bursting. Default 200.
   */
  closeAfterRefusals?: number;
}

/**
 * A token bucket: each command takes a token, tokens come back at `perSecond`. The clock is
 * passed in (a scheduler's `now`), so tests decide what time it is.
 *
 * @example
 * const limiter = new RateLimiter({ burst: 2, perSecond: 1 }, () => scheduler.now());
 * limiter.tryTake(); // true, true, then false until a second has passed
 */
export class RateLimiter {
  private tokens: number;
  private updatedAt: number;
  private readonly burst: number;
  private readonly perMillisecond: number;

  constructor(
    options: RateLimitOptions,
    private readonly now: () => number,
  ) {
    this.burst = options.burst ?? 20;
    this.perMillisecond = (options.perSecond ?? 10) / 1000;
    this.tokens = this.burst;
    this.updatedAt = now();
  }

  /** Takes a token if one is left. */
  tryTake(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.updatedAt) * this.perMillisecond);
    this.updatedAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
