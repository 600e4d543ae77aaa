import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import type { ErrorFrame } from "../../src/protocol/protocol-schemas.js";
import { ClientConnection } from "../../src/server/client-connection.js";
import { type Corkable, corkableOf, CorkedWrites } from "../../src/server/corked-writes.js";

/** Records what a socket under test was told, in order. */
class RecordingStream implements Corkable {
  readonly calls: string[] = [];
  cork(): void {
    this.calls.push("cork");
  }
  uncork(): void {
    this.calls.push("uncork");
  }
}

/** A small control frame, numbered. */
const errorFrame = (frame: number): ErrorFrame => ({ type: "error", code: "invalid_frame", message: `frame ${frame}` });

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Counts how many writes the stream under a socket made (`_write` one chunk, `_writev` several). */
function countWrites(stream: object): { writes: number; chunks: number } {
  const counts = { writes: 0, chunks: 0 };
  const target = stream as { _write: (...args: unknown[]) => void; _writev: (chunks: unknown[], ...rest: unknown[]) => void };
  const write = target._write.bind(stream);
  const writev = target._writev.bind(stream);
  target._write = (...args) => {
    counts.writes += 1;
    counts.chunks += 1;
    write(...args);
  };
  target._writev = (chunks, ...rest) => {
    counts.writes += 1;
    counts.chunks += chunks.length;
    writev(chunks, ...rest);
  };
  return counts;
}

describe("CorkedWrites", () => {
  it("corks once a turn, and lets the writes go at the end of it", async () => {
    const stream = new RecordingStream();
    const writes = new CorkedWrites(stream, 1000);
    for (let frame = 0; frame < 5; frame++) {
      writes.hold();
      writes.held(10);
    }
    expect(stream.calls).toStrictEqual(["cork"]);
    await nextTurn();
    expect(stream.calls).toStrictEqual(["cork", "uncork"]);
    writes.hold();
    expect(stream.calls).toStrictEqual(["cork", "uncork", "cork"]);
    await nextTurn();
    expect(stream.calls).toStrictEqual(["cork", "uncork", "cork", "uncork"]);
  });

  it("lets what it holds go as soon as it passes the limit, and holds on", async () => {
    const stream = new RecordingStream();
    const writes = new CorkedWrites(stream, 25);
    for (let frame = 0; frame < 6; frame++) {
      writes.hold();
      writes.held(10);
    }
    // 30 characters passed the limit at the third frame, and again at the sixth.
    expect(stream.calls).toStrictEqual(["cork", "uncork", "cork", "uncork", "cork"]);
    await nextTurn();
    expect(stream.calls.at(-1)).toBe("uncork");
    expect(stream.calls.filter((call) => call === "cork")).toHaveLength(3);
    expect(stream.calls.filter((call) => call === "uncork")).toHaveLength(3);
  });
});

describe("corkableOf", () => {
  it("finds nothing to cork on an object without an underlying socket", () => {
    expect(corkableOf({})).toBeUndefined();
    expect(corkableOf({ _socket: null })).toBeUndefined();
    expect(corkableOf({ _socket: { cork: () => undefined } })).toBeUndefined();
  });
});

describe("a client's frames over a real ws socket", () => {
  const closers: (() => void)[] = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  async function connectedPair(): Promise<{ serverSide: WebSocket; received: string[]; closed: Promise<unknown> }> {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await once(wss, "listening");
    const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
    const received: string[] = [];
    client.on("message", (data) => received.push(String(data)));
    const [serverSide] = (await once(wss, "connection")) as [WebSocket];
    await once(client, "open");
    closers.push(() => {
      client.terminate();
      wss.close();
    });
    return { serverSide, received, closed: once(client, "close") };
  }

  it("reach the kernel in one write per turn, all of them and in order", async () => {
    const { serverSide, received } = await connectedPair();
    const corkable = corkableOf(serverSide);
    expect(corkable).toBeDefined();
    const counts = countWrites(corkable!);
    const connection = new ClientConnection(serverSide, () => "{}", {}, undefined, undefined, corkable);
    for (let frame = 0; frame < 50; frame++) connection.sendFrame(errorFrame(frame));
    // ws writes a frame's header and its payload: 100 chunks, in one write.
    await nextTurn();
    expect(counts).toStrictEqual({ writes: 1, chunks: 100 });
    while (received.length < 50) await nextTurn();
    expect(received.map((text) => (JSON.parse(text) as { message: string }).message)).toStrictEqual(Array.from({ length: 50 }, (_, frame) => `frame ${frame}`));
  });

  it("without a corkable socket, writes each frame as it comes, as before", async () => {
    const { serverSide, received } = await connectedPair();
    const counts = countWrites(corkableOf(serverSide)!);
    const connection = new ClientConnection(serverSide, () => "{}", {});
    for (let frame = 0; frame < 50; frame++) connection.sendFrame(errorFrame(frame));
    await nextTurn();
    expect(counts.writes).toBe(50);
    while (received.length < 50) await nextTurn();
    expect(received).toHaveLength(50);
  });
});
