import type { SchedulerLike, Subscription } from "rxjs";

/** What the sweep needs to know of a connection. */
export interface SweptConnection {
  /** When it connected or last sent a command (scheduler time). */
  readonly activeAt: number;
  readonly attached: boolean;
  /** True while its session runs: a watcher of a long run is not idle. */
  readonly busy: boolean;
}

export interface IdleSweepOptions {
  /** Close a connection that has not attached this long after connecting; 0 never. */
  attachTimeoutMs: number;
  /** Close an attached connection quiet this long while its session rests; 0 never. */
  idleTimeoutMs: number;
}

/**
 * Finds connections that never attached or went idle, several times per timeout, and hands them
 * to `close`. One sweep for all connections, not a timer each: rescheduling a timer per incoming
 * frame would make a flood costlier still. It runs only while there are connections to sweep.
 */
export class IdleSweep<Connection extends SweptConnection> {
  private timer: Subscription | undefined;
  private readonly period: number;

  constructor(
    private readonly options: IdleSweepOptions,
    private readonly connections: ReadonlySet<Connection>,
    private readonly close: (connection: Connection, reason: "No attach in time" | "Idle") => void,
    private readonly scheduler: SchedulerLike,
  ) {
    const timeouts = [options.attachTimeoutMs, options.idleTimeoutMs].filter((timeout) => timeout > 0);
    this.period = timeouts.length === 0 ? 0 : Math.max(10, Math.min(...timeouts) / 4);
  }

  /** Starts sweeping if it is not already (call when a connection arrives). */
  arm(): void {
    if (this.timer || this.period === 0) return;
    const sweep = this;
    this.timer = this.scheduler.schedule(function () {
      sweep.sweepOnce();
      if (sweep.connections.size === 0) {
        sweep.timer = undefined;
        return;
      }
      this.schedule(undefined, sweep.period);
    }, this.period);
  }

  stop(): void {
    this.timer?.unsubscribe();
    this.timer = undefined;
  }

  private sweepOnce(): void {
    const { attachTimeoutMs, idleTimeoutMs } = this.options;
    const now = this.scheduler.now();
    for (const connection of this.connections) {
      const quiet = now - connection.activeAt;
      if (!connection.attached && attachTimeoutMs > 0 && quiet >= attachTimeoutMs) this.close(connection, "No attach in time");
      else if (connection.attached && idleTimeoutMs > 0 && quiet >= idleTimeoutMs && !connection.busy) this.close(connection, "Idle");
    }
  }
}
