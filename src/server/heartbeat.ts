import type { SchedulerLike, Subscription } from "rxjs";

/** The part of a `ws` WebSocket the heartbeat needs. */
export interface PingableSocket {
  ping(): void;
  terminate(): void;
  on(event: "pong", listener: () => void): unknown;
}

/**
 * Pings every socket each `intervalMs` and terminates those that did not answer the previous
 * ping: a peer that vanished without a TCP close (a laptop lid, a dead NAT entry) would
 * otherwise hold its session slot and buffers forever.
 */
export class Heartbeat {
  private readonly alive = new Map<PingableSocket, boolean>();
  private readonly timer: Subscription | undefined;

  constructor(intervalMs: number, scheduler: SchedulerLike) {
    if (intervalMs <= 0) return;
    const alive = this.alive;
    this.timer = scheduler.schedule(function () {
      for (const [socket, answered] of alive) {
        if (!answered) {
          alive.delete(socket);
          socket.terminate();
          continue;
        }
        alive.set(socket, false);
        socket.ping();
      }
      this.schedule(undefined, intervalMs);
    }, intervalMs);
  }

  watch(socket: PingableSocket): void {
    this.alive.set(socket, true);
    socket.on("pong", () => {
      if (this.alive.has(socket)) this.alive.set(socket, true);
    });
  }

  forget(socket: PingableSocket): void {
    this.alive.delete(socket);
  }

  stop(): void {
    this.timer?.unsubscribe();
    this.alive.clear();
  }
}
