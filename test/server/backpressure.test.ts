import type { Socket } from "node:net";
import { Type } from "@sinclair/typebox";
import { asyncScheduler } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import type { ServerFrame } from "../../src/protocol/protocol-schemas.js";
import { WebSocket } from "ws";
import { connectAgent } from "../../src/client/index.js";
import { assertContiguous, isEventCarrier, RawClient, waitFor } from "./helpers.js";

/** 30 000 characters in 30-character deltas: ~1000 updates. */
const REPLY_TEXT = "All work and no play makes Jack a dull boy. ".repeat(700).slice(0, 30_000);
const PROGRESS_UPDATES = 600;
/**
 * Bulk per progress update: loopback sockets buffer tens of megabytes in the kernel (tcp_rmem
 * up to 32 MiB here), and the paused client's share must outgrow that before the server queues.
 */
const PADDING = "p".repeat(64 * 1024);

/** Reports progress many times, a millisecond apart: tool updates are not merged, so they fill a slow client's queue. */
const chatty = defineTool({
  name: "chatty",
  description: "Reports progress a lot",
  parameters: Type.Object({}),
  execute: (_id, _args, { update }) =>
    new Promise((resolve) => {
      let step = 0;
      const timer = setInterval(() => {
        step += 1;
        update({ content: [{ type: "text", text: `step ${step} ${PADDING}` }], details: step });
        if (step < PROGRESS_UPDATES) return;
        clearInterval(timer);
        resolve({ content: [{ type: "text", text: "done" }], details: PROGRESS_UPDATES });
      }, 1);
    }),
});

function floodingAgent(): Agent {
  const model = scriptedModel(
    [{ content: [{ type: "text", text: REPLY_TEXT }, { type: "toolCall", name: "chatty", arguments: {} }] }, "Finished."],
    { scheduler: asyncScheduler, delay: 1, chunkSize: 30 },
  );
  return new Agent({ model, tools: [chatty] });
}

let server: AgentServer | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.terminate();
  await server?.close();
  server = undefined;
});

describe("backpressure", () => {
  it("lets a fast client keep up while a paused one stays bounded and ends with a snapshot", async () => {
    const limits = { highWaterMark: 256 * 1024, maxQueuedFrames: 64, maxQueuedBytes: 3 * 1024 * 1024 };
    let agent: Agent | undefined;
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, backpressure: limits, createAgent: () => (agent = floodingAgent()) });
    const fast = await RawClient.open(server.url);
    const slow = await RawClient.open(server.url);
    clients.push(fast, slow);
    await fast.request({ type: "attach", session: "s" });
    await slow.request({ type: "attach", session: "s" });
    // Stop reading: the kernel buffers fill, then the server's bufferedAmount climbs.
    (slow.socket as unknown as { _socket: Socket })._socket.pause();

    let producedBytes = 0;
    let updates = 0;
    agent?.events$.subscribe((event) => {
      producedBytes += JSON.stringify(event).length;
      if (event.type === "message_update") updates++;
    });
    const started = performance.now();
    await fast.request({ type: "prompt", input: "flood" });
    await waitFor(() => fast.hasEvent("agent_end"), "the fast client's agent_end", 20_000);
    const fastDoneAt = performance.now();

    const [fastStats, slowStats] = server.session("s")?.clients ?? [];
    const finalSeq = server.session("s")?.lastSeq ?? 0;
    // The fast client saw every event, in order, while the slow one was still not reading (no
    // wall-clock bound: how long that takes depends on the machine's load, not on the slow client).
    assertContiguous(fast.events(), 0);
    expect(fast.events().at(-1)?.seq).toBe(finalSeq);
    expect(fastStats?.resyncs).toBe(0);

    // The slow client's queue stayed within its caps and was cut over to a snapshot. (Delta
    // frames make the reply small enough for the kernel's buffers; merging is shown in
    // client-connection.test.ts.)
    expect(slowStats?.peakQueuedFrames).toBeLessThanOrEqual(limits.maxQueuedFrames + 1);
    expect(slowStats?.peakQueuedBytes).toBeLessThanOrEqual(limits.maxQueuedBytes + 256 * 1024);
    expect(slowStats?.resyncs).toBeGreaterThanOrEqual(1);
    expect(slowStats?.sentBytes).toBeLessThan(producedBytes);

    (slow.socket as unknown as { _socket: Socket })._socket.resume();
    const snapshot = await waitFor(
      () => slow.frames.findLast((frame): frame is Extract<ServerFrame, { type: "snapshot" }> => frame.type === "snapshot" && frame.seq > 0),
      "the slow client's snapshot",
      20_000,
    );
    expect(snapshot.seq).toBe(finalSeq);
    expect(snapshot.state.messages).toEqual(agent?.messages);
    expect(snapshot.state.isStreaming).toBe(false);
    // Before the snapshot, whatever it got was contiguous (merged ranges included).
    const beforeSnapshot = slow.frames.slice(0, slow.frames.indexOf(snapshot)).filter(isEventCarrier);
    assertContiguous(beforeSnapshot, 0);

    const stats = { ...slowStats, producedBytes, updates, runMs: Math.round(fastDoneAt - started) };
    console.log(`backpressure: ${JSON.stringify(stats)}`);
  });

  it("a connectAgent client paused through the whole run gets a snapshot and then the run's agent_end on events$", async () => {
    const limits = { highWaterMark: 256 * 1024, maxQueuedFrames: 64, maxQueuedBytes: 3 * 1024 * 1024 };
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, backpressure: limits, createAgent: () => floodingAgent() });
    const sockets: WebSocket[] = [];
    const client = connectAgent(server.url, {
      session: "s",
      reconnect: false,
      WebSocket: class extends WebSocket {
        constructor(url: string, protocols?: string[]) {
          super(url, protocols);
          sockets.push(this);
        }
      },
    });
    const seen: string[] = [];
    client.events$.subscribe((event) => seen.push(event.type));
    await client.ready;
    const driver = await RawClient.open(server.url);
    clients.push(driver);
    await driver.request({ type: "attach", session: "s" });
    await waitFor(() => (client.state.messages.length === 0 ? true : undefined), "the client's first snapshot");
    const socket = sockets[0] as unknown as { _socket: Socket };
    socket._socket.pause();
    await driver.request({ type: "prompt", input: "flood" });
    // The client saw the run start before it stopped reading, or gets it from the kernel's buffers.
    await waitFor(() => driver.hasEvent("agent_end"), "the run's end", 20_000);
    expect(server.session("s")?.clients.some((stats) => stats.resyncs >= 1)).toBe(true);
    socket._socket.resume();
    await waitFor(() => client.state.messages.length === 4 && !client.state.isStreaming, "the client's snapshot after the run", 20_000);
    await waitFor(() => seen.includes("agent_end"), "the run's agent_end on events$", 5_000);
    expect(seen[0]).toBe("agent_start");
    expect(seen.filter((type) => type === "agent_end")).toHaveLength(1);
    client.close();
  });
});
