import { asyncScheduler, type SchedulerLike } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { Agent } from "../../src/agent/agent.js";
import { type AgentServer, serveAgents, type ServeAgentsOptions } from "../../src/server/index.js";
import { RawClient, realtimeAgent, waitFor } from "./helpers.js";

let server: AgentServer | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.terminate();
  await server?.close();
  server = undefined;
});

async function start(options: Partial<ServeAgentsOptions> = {}): Promise<AgentServer> {
  server = await serveAgents({ port: 0, createAgent: () => realtimeAgent(["ok"]), ...options });
  return server;
}

async function open(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<RawClient> {
  const client = await RawClient.open(url, options);
  clients.push(client);
  return client;
}

/** The HTTP status of a refused upgrade. */
function refusal(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options);
    socket.on("unexpected-response", (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.on("open", () => reject(new Error("The upgrade was accepted")));
    socket.on("error", () => undefined);
  });
}

describe("serveAgents safety", () => {
  it("refuses an upgrade without the right token with 401, from a header or the query", async () => {
    const { url } = await start({ auth: (token) => token === "s3cret" });
    expect(await refusal(url)).toBe(401);
    expect(await refusal(`${url}?token=wrong`)).toBe(401);
    expect(await refusal(url, { headers: { authorization: "Bearer nope" } })).toBe(401);
    expect((await open(url, { headers: { authorization: "Bearer s3cret" } })).socket.readyState).toBe(WebSocket.OPEN);
    expect((await open(`${url}?token=s3cret`)).socket.readyState).toBe(WebSocket.OPEN);
  });

  it("refuses origins outside the allowlist (a browser's socket is closed with 4403) and lets clients without an Origin in", async () => {
    const { url } = await start({ allowedOrigins: ["http://app.example"] });
    const foreign = await open(url, { origin: "http://evil.example" });
    await waitFor(() => foreign.closeCode, "the close");
    expect(foreign.closeCode).toBe(4403);
    expect((await open(url, { origin: "http://app.example" })).socket.readyState).toBe(WebSocket.OPEN);
    expect((await open(url)).socket.readyState).toBe(WebSocket.OPEN);
  });

  // Issue 27, row 7: `serveAgents({ port, createAgent })` as the README writes it let a page on
  // any other origin drive the agent and its tools (cross-site WebSocket hijacking).
  it("by default lets in only its own page's origins (loopback names alike) and clients without an Origin", async () => {
    const { url, port } = await start();
    const foreign = await open(url, { origin: "http://evil.example" });
    await waitFor(() => foreign.closeCode, "the close");
    expect([foreign.closeCode, foreign.closeReason]).toStrictEqual([4403, "Origin not allowed"]);
    const otherPort = await open(url, { origin: `http://127.0.0.1:${port + 1}` });
    await waitFor(() => otherPort.closeCode, "the close");
    expect(otherPort.closeCode).toBe(4403);
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]) {
      const own = await open(url, { origin });
      expect(await own.request({ type: "attach", session: "s" })).toMatchObject({ type: "ack" });
    }
    expect((await open(url)).socket.readyState).toBe(WebSocket.OPEN);
  });

  it("lets every origin in only when told so with allowedOrigins: \"*\"", async () => {
    const { url } = await start({ allowedOrigins: "*" });
    const anyPage = await open(url, { origin: "http://evil.example" });
    expect(await anyPage.request({ type: "attach", session: "s" })).toMatchObject({ type: "ack" });
  });

  it("closes with 1009 on a frame over maxPayload, and the session survives", async () => {
    const { url } = await start({ maxPayload: 1024 });
    const client = await open(url);
    await client.request({ type: "attach", session: "s" });
    client.send({ type: "prompt", input: "x".repeat(2000) });
    await waitFor(() => client.closeCode, "the close");
    expect(client.closeCode).toBe(1009);
    const again = await open(url);
    expect(await again.request({ type: "attach", session: "s" })).toMatchObject({ type: "ack", resume: "snapshot" });
    expect(server?.sessionIds()).toEqual(["s"]);
  });

  it("terminates a connection that stops answering pings and keeps live ones", async () => {
    const { url } = await start({ heartbeatIntervalMs: 100 });
    const live = await open(url);
    let pingsToLive = 0;
    live.socket.on("ping", () => (pingsToLive += 1));
    const dead = await open(url, { autoPong: false });
    await waitFor(() => dead.closeCode, "the dead connection to be dropped");
    expect(dead.closeCode).toBe(1006);
    // Two more periods, counted by the pings it gets rather than by a sleep: the server pings only a
    // connection that answered the ping before, so the live one kept answering.
    const pingsWhenDeadDropped = pingsToLive;
    await waitFor(() => pingsToLive >= pingsWhenDeadDropped + 2, "two more pings to the live connection");
    expect(live.socket.readyState).toBe(WebSocket.OPEN);
  });

  it("limits commands per connection with a token bucket on the injected clock", async () => {
    let now = 0;
    const clock: SchedulerLike = { now: () => now, schedule: asyncScheduler.schedule.bind(asyncScheduler) };
    const { url } = await start({ scheduler: clock, heartbeatIntervalMs: 0, rateLimit: { burst: 3, perSecond: 1 } });
    const client = await open(url);
    await client.request({ type: "attach", session: "s" });
    const replies = [];
    for (let index = 0; index < 4; index++) replies.push(await client.request({ type: "steer", input: `m${index}` }));
    expect(replies.map((reply) => (reply.type === "error" ? reply.code : "ack"))).toEqual(["ack", "ack", "rate_limited", "rate_limited"]);
    expect(replies[2]).toMatchObject({ message: expect.stringMatching(/Too many commands/) });
    now += 1000;
    expect(await client.request({ type: "steer", input: "later" })).toMatchObject({ type: "ack" });
    expect(await client.request({ type: "steer", input: "too soon" })).toMatchObject({ code: "rate_limited" });
  });

  it("limits commands as they arrive, also while an attach waits for a slow createAgent", async () => {
    let release: () => void = () => undefined;
    const created = new Promise<void>((resolve) => (release = resolve));
    const { url } = await start({
      heartbeatIntervalMs: 0,
      rateLimit: { burst: 1, perSecond: 0.001 },
      createAgent: async () => {
        await created;
        return realtimeAgent(["ok"]);
      },
    });
    const client = await open(url);
    const attachId = client.send({ type: "attach", session: "s" });
    const steerIds = [0, 1, 2].map((index) => client.send({ type: "steer", input: `m${index}` }));
    // Refused at once, before the attach (and the commands queued behind it) went anywhere.
    await waitFor(() => client.frames.filter((frame) => frame.type === "error").length === 3, "three refusals");
    expect(client.frames.some((frame) => frame.type === "ack")).toBe(false);
    release();
    await waitFor(() => client.frames.some((frame) => frame.type === "ack" && frame.id === attachId), "the attach");
    const refused = client.frames.flatMap((frame) => (frame.type === "error" && frame.code === "rate_limited" ? [frame.id] : []));
    expect(refused).toEqual(steerIds);
  });

  it("caps sessions, evicting an idle session without clients to make room", async () => {
    const closed: string[] = [];
    const { url } = await start({ maxSessions: 2, onSessionClose: (id: string, _agent: Agent) => closed.push(id) });
    const one = await open(url);
    const two = await open(url);
    const three = await open(url);
    await one.request({ type: "attach", session: "one" });
    await two.request({ type: "attach", session: "two" });
    expect(await three.request({ type: "attach", session: "three" })).toMatchObject({ type: "error", code: "session_limit" });
    await one.close();
    await waitFor(() => server?.session("one")?.clients.length === 0, "session one to lose its client");
    expect(await three.request({ type: "attach", session: "three" })).toMatchObject({ type: "ack", session: "three" });
    expect(closed).toEqual(["one"]);
    expect(server?.sessionIds().sort()).toEqual(["three", "two"]);
  });
});
