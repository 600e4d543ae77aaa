import { describe, expect, it } from "vitest";
import { ClientConnection, type SendableSocket } from "../../src/server/client-connection.js";
import type { AgentEvent, AssistantMessage } from "../../src/types.js";

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

/** A logged event frame, as the session hub builds it. */
const logged = (seq: number, type: AgentEvent["type"], eventJson: string) => ({ seq, type, json: `{"type":"event","seq":${seq},"event":${eventJson}}` });

/** A delta frame and what its merge would carry. */
const delta = (seq: number, text: string) => ({
  frame: { seq, type: "message_update" as const, json: JSON.stringify({ type: "update", seq, event: { type: "text_delta", contentIndex: 0, delta: "a" } }) },
  mergeable: { merged: () => ({ event: { type: "text_delta" as const, contentIndex: 0, delta: "a" }, message: { text } as unknown as AssistantMessage }) },
});

describe("ClientConnection", () => {
  it("writes straight through while the socket keeps up", () => {
    const socket = new FakeSocket();
    const connection = new ClientConnection(socket, () => "{}", { highWaterMark: 1000 });
    connection.sendEvent(logged(1, "message_start", "{}"));
    socket.drain();
    connection.sendEvent(logged(2, "message_update", update("a")));
    expect(socket.frames()).toEqual([
      { type: "event", seq: 1, event: {} },
      { type: "event", seq: 2, event: { type: "message_update", message: { text: "a" } } },
    ]);
    expect(connection.stats.coalescedUpdates).toBe(0);
  });

  it("merges consecutive queued updates into one carrying the whole message, covering first..seq", () => {
    const socket = new FakeSocket();
    const connection = new ClientConnection(socket, () => "{}", { highWaterMark: 10 });
    connection.sendEvent(logged(1, "message_start", JSON.stringify({ type: "message_start", padding: "x".repeat(20) })));
    for (let seq = 2; seq <= 101; seq++) {
      const { frame, mergeable } = delta(seq, "a".repeat(seq - 1));
      connection.sendEvent(frame, mergeable);
    }
    connection.sendEvent(logged(102, "message_end", "{}"));
    expect(connection.stats.queuedFrames).toBe(2);
    socket.drainAll();
    expect(socket.frames()).toEqual([
      { type: "event", seq: 1, event: { type: "message_start", padding: "x".repeat(20) } },
      { type: "update", seq: 101, first: 2, event: { type: "text_delta", contentIndex: 0, delta: "a" }, message: { text: "a".repeat(100) } },
      { type: "event", seq: 102, event: {} },
    ]);
    expect(connection.stats.coalescedUpdates).toBe(99);
  });

  it("carries the argument text of the calls still streaming on a merged update (protocol 3)", () => {
    const socket = new FakeSocket();
    const connection = new ClientConnection(socket, () => "{}", { highWaterMark: 10 });
    connection.sendEvent(logged(1, "message_start", JSON.stringify({ type: "message_start", padding: "x".repeat(20) })));
    for (const [seq, text] of [[2, '{"a'], [3, '{"a":1']] as const) {
      const event = { type: "toolcall_delta" as const, contentIndex: 0, delta: text.slice(-3) };
      const frame = { seq, type: "message_update" as const, json: JSON.stringify({ type: "update", seq, event }) };
      connection.sendEvent(frame, { merged: () => ({ event, message: { text } as unknown as AssistantMessage, argumentTexts: [{ i: 0, text }] }) });
    }
    socket.drainAll();
    expect(socket.frames()[1]).toEqual({ type: "update", seq: 3, first: 2, event: { type: "toolcall_delta", contentIndex: 0, delta: "\":1" }, message: { text: '{"a":1' }, argumentTexts: [{ i: 0, text: '{"a":1' }] });
  });

  it("past the cap drops queued events, keeps acks, and sends a fresh snapshot once drained", async () => {
    const socket = new FakeSocket();
    let seq = 0;
    const connection = new ClientConnection(socket, () => JSON.stringify({ type: "snapshot", seq }), { highWaterMark: 10, maxQueuedFrames: 5 });
    connection.sendEvent(logged(++seq, "agent_start", "{}".padEnd(20, " ")));
    connection.sendFrame({ type: "ack", id: "a1" });
    for (let index = 0; index < 10; index++) connection.sendEvent(logged(++seq, "tool_execution_update", "{}"));
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

  it("closes a client whose unread acks and errors pass the cap, owes it no snapshot, and writes nothing more", () => {
    const socket = new FakeSocket();
    let snapshots = 0;
    let overBudget = 0;
    const connection = new ClientConnection(
      socket,
      () => {
        snapshots += 1;
        return "{}";
      },
      { highWaterMark: 10, maxQueuedFrames: 4 },
      () => (overBudget += 1),
    );
    for (let index = 0; index < 10; index++) connection.sendFrame({ type: "error", id: `${index}`, code: "rate_limited", message: "slow down" });
    expect(overBudget).toBe(1);
    expect(connection.stats.queuedFrames).toBe(0);
    socket.drainAll();
    connection.sendEvent(logged(1, "agent_start", "{}"));
    socket.drainAll();
    expect(snapshots).toBe(0);
    expect(connection.stats.resyncs).toBe(0);
    // The first went straight to the socket; the next four filled the queue; the sixth broke the budget.
    expect(socket.frames().map((frame) => frame.type)).toEqual(["error"]);
  });

  it("writes nothing to a socket that has closed, also when earlier writes complete afterwards", () => {
    const socket = new FakeSocket();
    const connection = new ClientConnection(socket, () => "{}", { highWaterMark: 10 });
    connection.sendEvent(logged(1, "agent_start", "{}"));
    connection.sendEvent(logged(2, "turn_start", "{}"));
    connection.sendFrame({ type: "ack", id: "a" });
    expect(socket.sent).toHaveLength(1);
    socket.readyState = 3;
    socket.drainAll();
    connection.sendEvent(logged(3, "turn_end", "{}"));
    connection.sendFrame({ type: "error", code: "rate_limited", message: "slow down" });
    expect(socket.sent).toHaveLength(1);
    expect(connection.stats.queuedFrames).toBe(0);
  });

  it("splits a frame over maxFrameBytes into fragments that join to the original", () => {
    const socket = new FakeSocket();
    const connection = new ClientConnection(socket, () => "{}", { maxFrameBytes: 1000 });
    const big = { type: "ack", id: "x", text: `"quotes" ünïcödé 😀 ${"y".repeat(5000)}` } as unknown as Parameters<ClientConnection["sendFrame"]>[0];
    connection.sendFrame(big);
    socket.drainAll();
    const parts = socket.frames() as unknown as { type: string; data: string; final?: true }[];
    expect(parts.length).toBeGreaterThan(5);
    for (const text of socket.sent) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1000);
    expect(parts.map((part) => part.final ?? false)).toEqual([...parts.slice(1).map(() => false), true]);
    expect(JSON.parse(parts.map((part) => part.data).join(""))).toEqual(big);
  });
});
