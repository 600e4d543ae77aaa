import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { serveWebUi, type WebUiServer } from "../../src/server/index.js";
import { RawClient, realtimeAgent, waitFor } from "./helpers.js";

const FLOOD_FRAMES = 300_000;
const REPLY = "A short answer streamed word by word, to time a prompt from start to end.";

let ui: WebUiServer | undefined;
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await ui?.close();
  ui = undefined;
});

/** Runs one prompt on `client` and resolves with how long it took to its agent_end. */
async function timedPrompt(client: RawClient): Promise<number> {
  const started = performance.now();
  const before = client.eventTypes().filter((type) => type === "agent_end").length;
  await client.request({ type: "prompt", input: "time me" });
  await waitFor(() => client.eventTypes().filter((type) => type === "agent_end").length > before, "agent_end", 30_000);
  return performance.now() - started;
}

async function timedFetch(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url);
  await response.text();
  expect(response.status).toBe(200);
  return performance.now() - started;
}

describe("a flooding client", () => {
  it.each([
    ["the rate limit's refusals close it", {}],
    ["its unread replies pass the queue's cap and close it", { rateLimit: { closeAfterRefusals: Number.POSITIVE_INFINITY } }],
  ])("sending 300 000 frames without reading delays no one (%s): another client's prompt completes, HTTP answers", async (_name, options) => {
    ui = await serveWebUi({ port: 0, heartbeatIntervalMs: 0, createAgent: () => realtimeAgent([REPLY, REPLY], 5), ...options });
    const wsUrl = ui.url.replace("http", "ws") + "ws";
    const user = await RawClient.open(wsUrl);
    cleanups.push(() => user.close());
    await user.request({ type: "attach", session: "user" });
    const usual = await timedPrompt(user);

    const flooder = await RawClient.open(wsUrl);
    cleanups.push(() => flooder.socket.terminate());
    await flooder.request({ type: "attach", session: "flood" });
    // Stop reading: every reply the server owes it stays unread.
    (flooder.socket as unknown as { _socket: Socket })._socket.pause();
    let sent = 0;
    // Bounded in count, not in time (a 20 s bound cut the flood short at load 10); loopback only.
    while (sent < FLOOD_FRAMES) {
      // After the server closes it, sends fail through the callback; the count goes on.
      for (let batch = 0; batch < 1000 && sent < FLOOD_FRAMES; batch++, sent++) flooder.socket.send("{}", () => undefined);
      await new Promise((resolve) => setImmediate(resolve));
    }

    // Meanwhile (the frames are still arriving) the other client's prompt runs as usual.
    const during = await timedPrompt(user);
    const [floodStats] = ui.agents.session("flood")?.clients ?? [];
    // Closed for flooding: the server stopped reading it, its session lost it.
    await waitFor(() => ui?.agents.session("flood")?.clients.length === 0, "the flooder to be closed", 10_000);
    flooder.socket.terminate();
    const http = await timedFetch(ui.url);

    console.log(`flood: ${sent} frames sent; usual prompt ${Math.round(usual)} ms, during the flood ${Math.round(during)} ms; HTTP after ${Math.round(http)} ms; flooder ${JSON.stringify(floodStats ?? "closed")}`);
    // No wall-clock bound (it failed on a loaded machine, not on a wedged server): a wedged server
    // never completes the prompt (timedPrompt's wait fails) nor the fetch (the test times out).
    expect([during, http].every(Number.isFinite)).toBe(true);
  });
});
