import { describe, expect, it } from "vitest";
import { ClientConnection, type SendableSocket } from "../../src/server/client-connection.js";

/** A socket whose kernel never takes anything until `drain()`: every send stays buffered. */
class FakeSocket implements SendableSocket {
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: string[] = [];
  private callbacks: (() => void)[] = [];

  send(data: string, callback: () => void): void {
    this.sent.push(data);
    this.bufferedAmount += data.length;
    this.callbacks.push(callback);
  }

  drain(): void {
    this.bufferedAmount = 0;
    const callbacks = this.callbacks;
    this.callbacks = [];
    for (const callback of callbacks) callback();
  }

  /** Drains until the connection has nothing more to write. */
  drainAll(): void {
    while (this.callbacks.length > 0) this.drain();
  }

  frames(): { type: string; seq?: number; first?: number }[] {
    return this.sent.map((text) => JSON.parse(text) as { type: string; seq?: number; first?: number });
  }
}

const update = (text: string) => JSON.stringify({ type: "message_update", message: { text } });

describe("ClientConnection", () => {
  it("writes straight through while the socket keeps up", () => {
    const socket = new FakeSocket();
    const connection = new ClientConnection(socket, () => "{}", { highWaterMark: 1000 });
    connection.sendEvent(1, "message_start", "{}");
    socket.drain();
    connection.sendEvent(2, "message_update", update("a"));
    expect(socket.frames()).toEqual([
      { type: "event", seq: 1, event: {} },
      { type: "event", seq: 2, event: { type: "message_update", message: { text: "a" } } },
    ]);
    expect(connection.stats.coalescedUpdates).toBe(0);
  });

  it("merges consecutive queued updates into the latest one, covering first..seq", () => {
    const socket = new FakeSocket();
    const connection = new ClientConnection(socket, () => "{}", { highWaterMark: 10 });
    connection.sendEvent(1, "message_start", JSON.stringify({ type: "message_start", padding: "x".repeat(20) }));
    for (let seq = 2; seq <= 101; seq++) connection.sendEvent(seq, "message_update", update("a".repeat(seq)));
    connection.sendEvent(102, "message_end", "{}");
    expect(connection.stats.queuedFrames).toBe(2);
    socket.drainAll();
    expect(socket.frames().map(({ type, seq, first }) => ({ type, seq, first }))).toEqual([
      { type: "event", seq: 1, first: undefined },
      { type: "event", seq: 101, first: 2 },
      { type: "event", seq: 102, first: undefined },
    ]);
    expect(connection.stats.coalescedUpdates).toBe(99);
  });

  it("past the cap drops queued events, keeps acks, and sends a fresh snapshot once drained", async () => {
    const socket = new FakeSocket();
    let seq = 0;
    const connection = new ClientConnection(socket, () => JSON.stringify({ type: "snapshot", seq }), { highWaterMark: 10, maxQueuedFrames: 5 });
    connection.sendEvent(++seq, "agent_start", "{}".padEnd(20, " "));
    connection.sendFrame({ type: "ack", id: "a1" });
    for (let index = 0; index < 10; index++) connection.sendEvent(++seq, "tool_execution_update", "{}");
    expect(connection.stats.resyncs).toBe(1);
    expect(connection.stats.peakQueuedFrames).toBe(6);
    const idle = connection.whenIdle();
    socket.drainAll();
    await idle;
    expect(socket.frames()).toEqual([
      { type: "event", seq: 1, event: {} },
      { type: "ack", id: "a1" },
      { type: "snapshot", seq: 11 },
    ]);
    expect(connection.stats.droppedFrames).toBe(10);
  });

  it("owes no snapshot when only acks and errors pile up, so a client that never attached gets none", () => {
    const socket = new FakeSocket();
    let snapshots = 0;
    const connection = new ClientConnection(
      socket,
      () => {
        snapshots += 1;
        return "{}";
      },
      { highWaterMark: 10, maxQueuedFrames: 4 },
    );
    for (let index = 0; index < 10; index++) connection.sendFrame({ type: "error", id: `${index}`, code: "rate_limited", message: "slow down" });
    socket.drainAll();
    expect(snapshots).toBe(0);
    expect(connection.stats.resyncs).toBe(0);
    expect(socket.frames().map((frame) => frame.type)).toEqual(Array.from({ length: 10 }, () => "error"));
  });
});
