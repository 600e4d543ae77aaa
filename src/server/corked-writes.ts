/** The part of a Node stream that can hold writes and pass them on together (`net.Socket`). */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * One client's socket held from its first frame of an event loop turn to the end of that turn
 * (`process.nextTick`), so the frames a turn makes reach the kernel in one write, not a write
 * each; past `limitBytes` held, they go out at once and holding starts again, so a burst never
 * counts against the client's high-water mark for more than that.
 *
 * Why: a streamed reply is many small frames (a `message_update` per delta), and a write each
 * was a system call each. Bench W7's watching clients of 50 sessions in one process got 31.5k
 * events/s against 16.7k before (medians of 5 runs each, alternating), and `bench:stream-e2e`'s
 * 10k small calls reached the client in 1.63 s against about 2.0 s (bench/README.md, 2026-12-03).
 */
export class CorkedWrites {
  /** Characters written since the socket was corked; `undefined` while it is not. */
  private heldLength: number | undefined;

  constructor(
    private readonly stream: Corkable,
    private readonly limitBytes: number,
  ) {}

  /** Before a frame is handed to the socket: corks it until the end of this turn, unless it is already. */
  hold(): void {
    if (this.heldLength !== undefined) return;
    this.heldLength = 0;
    this.stream.cork();
    process.nextTick(release, this);
  }

  /** After a frame of `length` characters was handed to the socket. */
  held(length: number): void {
    if (this.heldLength === undefined) return;
    this.heldLength += length;
    if (this.heldLength < this.limitBytes) return;
    this.heldLength = 0;
    this.stream.uncork();
    this.stream.cork();
  }

  /** Lets everything held go out. */
  release(): void {
    if (this.heldLength === undefined) return;
    this.heldLength = undefined;
    this.stream.uncork();
  }
}

// A module function, not a closure: one turn's release costs no allocation.
function release(writes: CorkedWrites): void {
  writes.release();
}

/**
 * The `net.Socket` under a `ws` WebSocket, when it has one that can be corked. Why ws's private
 * `_socket`: ws offers no way to cork; without it (another WebSocket, a later ws) frames go out
 * one write each.
 */
export function corkableOf(webSocket: object): Corkable | undefined {
  const underlying = (webSocket as { _socket?: Partial<Corkable> | null })._socket;
  return typeof underlying?.cork === "function" && typeof underlying.uncork === "function" ? (underlying as Corkable) : undefined;
}
