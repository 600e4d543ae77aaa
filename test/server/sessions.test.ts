import { Type } from "@sinclair/typebox";
import { Subject, switchMap, take, VirtualTimeScheduler } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { type AgentServer, serveAgents, type ServeAgentsOptions, serveWebUi, type WebUiServer } from "../../src/server/index.js";
import type { ServerFrame } from "../../src/protocol/protocol-schemas.js";
import type { Model } from "../../src/types.js";
import { RawClient, realtimeAgent, waitFor } from "./helpers.js";

let server: AgentServer | undefined;
let ui: WebUiServer | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.terminate();
  await server?.close();
  await ui?.close();
  server = undefined;
  ui = undefined;
});

async function start(options: Partial<ServeAgentsOptions> = {}): Promise<AgentServer> {
  server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, createAgent: () => new Agent({ model: scriptedModel(["one", "two", "three"]) }), ...options });
  return server;
}

async function open(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<RawClient> {
  const client = await RawClient.open(url, options);
  clients.push(client);
  return client;
}

const snapshots = (client: RawClient) => client.frames.filter((frame): frame is Extract<ServerFrame, { type: "snapshot" }> => frame.type === "snapshot");

describe("sessions", () => {
  it("starts a new epoch on reset: a client that resumes from before it gets a fresh snapshot, not a replay on the old transcript", async () => {
    const { url } = await start();
    const stayer = await open(url);
    await stayer.request({ type: "attach", session: "s" });
    await stayer.request({ type: "prompt", input: "first" });
    await waitFor(() => stayer.hasEvent("agent_end"), "the first run");
    const oldEpoch = snapshots(stayer)[0]?.epoch;
    const lastSeqBefore = server?.session("s")?.lastSeq ?? 0;

    await stayer.request({ type: "reset" });
    await stayer.request({ type: "prompt", input: "second" });
    await waitFor(() => stayer.eventTypes().filter((type) => type === "agent_end").length === 2, "the second run");
    // The reset took a sequence number: the new run's events follow it.
    const afterReset = snapshots(stayer)[1];
    expect(afterReset).toMatchObject({ seq: lastSeqBefore + 1, state: { messages: [] } });
    expect(afterReset?.epoch).not.toBe(oldEpoch);

    // Offline during the reset, with a lastSeq the log could otherwise replay from.
    const returning = await open(url);
    const ack = await returning.request({ type: "attach", session: "s", lastSeq: lastSeqBefore, epoch: oldEpoch });
    expect(ack).toMatchObject({ type: "ack", resume: "snapshot", epoch: afterReset?.epoch });
    const fresh = await waitFor(() => snapshots(returning)[0], "the snapshot");
    expect(fresh.state.messages).toEqual(server?.session("s")?.agent.messages);
    expect(fresh.state.messages.map((message) => (message as { role: string }).role)).toEqual(["user", "assistant"]);

    // An old client that sends no epoch is caught by the numbers: its lastSeq is before the reset.
    const old = await open(url);
    expect(await old.request({ type: "attach", session: "s", lastSeq: lastSeqBefore - 2 })).toMatchObject({ resume: "snapshot" });
    // A client of the current epoch still replays.
    const current = await open(url);
    expect(await current.request({ type: "attach", session: "s", lastSeq: lastSeqBefore + 2, epoch: afterReset?.epoch })).toMatchObject({ resume: "replay" });
  });

  it("closes sockets that never attach and idle ones (4000), so their sessions can be evicted for new users", async () => {
    // The server's clock is a virtual one the test moves: on real 150/300 ms timers a loaded
    // machine (load ~30) closed sockets before their attach was read.
    const clock = new VirtualTimeScheduler();
    const advanceTo = (time: number) => {
      clock.maxFrames = time;
      clock.flush();
    };
    const { url } = await start({ maxSessions: 2, attachTimeoutMs: 150, idleTimeoutMs: 300, scheduler: clock });
    const silent = await open(url);
    const idleOne = await open(url);
    const idleTwo = await open(url);
    await idleOne.request({ type: "attach", session: "one" });
    await idleTwo.request({ type: "attach", session: "two" });
    const newcomer = await open(url);
    const full = await newcomer.request({ type: "attach", session: "three" });
    expect(full).toMatchObject({ type: "error", code: "session_limit" });
    expect((full as { message: string }).message).toMatch(/holds 2 of at most 2 sessions: 2 with clients attached, 0 running without clients/);

    advanceTo(149);
    // A reply on each connection comes after any close the server had sent before it.
    expect(await idleOne.request({ type: "attach", session: "one" })).toMatchObject({ type: "ack" });
    expect([silent.closeCode, newcomer.closeCode]).toEqual([undefined, undefined]);
    advanceTo(150 + 149);
    await waitFor(() => silent.closeCode, "the silent socket to be closed");
    expect([silent.closeCode, silent.closeReason]).toEqual([4000, "No attach in time"]);
    expect(idleTwo.closeCode).toBeUndefined();
    advanceTo(10_000);
    await waitFor(() => idleOne.closeCode && idleTwo.closeCode, "the idle sockets to be closed");
    expect([idleOne.closeCode, idleOne.closeReason]).toEqual([4000, "Idle"]);

    // The refused newcomer never attached, so it was closed too; it comes back and gets in.
    await waitFor(() => newcomer.closeCode, "the refused newcomer to be closed");
    expect([newcomer.closeCode, newcomer.closeReason]).toEqual([4000, "No attach in time"]);
    const back = await open(url);
    expect(await back.request({ type: "attach", session: "three" })).toMatchObject({ type: "ack", session: "three" });
    expect(server?.sessionIds()).toContain("three");
  });

  it("keeps a socket that has been quiet while its session runs", async () => {
    // No timing margin: the model answers only when the test says, and a second socket that
    // went quiet later than the watcher shows the idle timeout has passed for the watcher too.
    const release = new Subject<void>();
    const replies = scriptedModel(["Done."]);
    const gated: Model = { ...replies, stream: (context, options) => release.pipe(take(1), switchMap(() => replies.stream(context, options))) };
    const { url } = await start({ idleTimeoutMs: 100, createAgent: () => new Agent({ model: gated }) });
    const watcher = await open(url);
    // Sent together: awaiting the attach first left a gap in which a loaded machine's sweep
    // closed the watcher as idle before its run began (seen at load average 15).
    await Promise.all([watcher.request({ type: "attach", session: "s" }), watcher.request({ type: "prompt", input: "go" })]);
    await waitFor(() => watcher.hasEvent("turn_start"), "the run to start");
    const quietLater = await open(url);
    await quietLater.request({ type: "attach", session: "other" });
    await waitFor(() => quietLater.closeCode, "the later quiet socket to be closed", 10_000);
    expect([quietLater.closeCode, quietLater.closeReason]).toEqual([4000, "Idle"]);
    // A reply on the watcher's own connection comes after any close the server had sent it.
    expect(await watcher.request({ type: "attach", session: "s" })).toMatchObject({ type: "ack" });
    expect(watcher.closeCode).toBeUndefined();
    release.next();
    await waitFor(() => watcher.hasEvent("agent_end"), "agent_end", 10_000);
  });
});

describe("a createAgent that answers something that is not an Agent", () => {
  // Its first use failed far from the factory: "Cannot read properties of undefined (reading 'subscribe')".
  it("is answered with an error that says what it returned, and the server goes on", async () => {
    const { url } = await start({ createAgent: (sessionId) => (sessionId === "number" ? (42 as unknown as Agent) : sessionId === "object" ? ({} as Agent) : new Agent({ model: scriptedModel(["fine"]) })) });
    const client = await open(url);
    expect(await client.request({ type: "attach", session: "number" })).toMatchObject({ type: "error", code: "internal", message: "createAgent failed: it returned a number, not an Agent." });
    expect(await client.request({ type: "attach", session: "object" })).toMatchObject({ message: "createAgent failed: it returned an object without subscribe(), not an Agent." });
    expect(await client.request({ type: "attach", session: "fine" })).toMatchObject({ type: "ack" });
  });
});

describe("a session whose events hold what JSON cannot write", () => {
  // The event's JSON.stringify threw: the hub dropped the session's clients, the snapshot they
  // reconnected to threw again, and the session could not be watched or prompted any more.
  it("sends a tool's BigInt details as digits, and the session goes on", async () => {
    const count = defineTool({ name: "count", description: "Counts", parameters: Type.Object({}), execute: () => ({ content: [{ type: "text", text: "many" }], details: { count: 10n } }) });
    const { url } = await start({ createAgent: () => new Agent({ model: scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name: "count", arguments: {} }] }, "Done.", "Again."]), tools: [count] }) });
    const client = await open(url);
    await client.request({ type: "attach", session: "s" });
    expect(await client.request({ type: "prompt", input: "count" })).toMatchObject({ type: "ack" });
    await waitFor(() => client.hasEvent("agent_end"), "agent_end");
    expect(client.agentEvents().find((event) => event.type === "tool_execution_end")).toMatchObject({ result: { details: { count: "10" } } });
    const watcher = await open(url);
    await watcher.request({ type: "attach", session: "s" });
    expect(snapshots(watcher)[0]?.state.messages).toHaveLength(4);
    expect(await watcher.request({ type: "prompt", input: "again" })).toMatchObject({ type: "ack" });
    await waitFor(() => watcher.agentEvents().some((event) => event.type === "agent_end"), "the second run's agent_end");
  });

  // A toJSON that throws did the same: the hub dropped the session's clients and its snapshot
  // could not be written, so the session could not be watched or prompted any more.
  it("writes a value whose toJSON throws as a note of why, and the session goes on", async () => {
    const unwritable = {
      toJSON() {
        throw new Error("not today");
      },
    };
    const report = defineTool({ name: "report", description: "Reports", parameters: Type.Object({}), execute: () => ({ content: [{ type: "text", text: "done" }], details: { unwritable, kept: 1 } }) });
    const { url } = await start({ createAgent: () => new Agent({ model: scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name: "report", arguments: {} }] }, "Done.", "Again."]), tools: [report] }) });
    const client = await open(url);
    await client.request({ type: "attach", session: "s" });
    expect(await client.request({ type: "prompt", input: "report" })).toMatchObject({ type: "ack" });
    await waitFor(() => client.hasEvent("agent_end"), "agent_end");
    expect(client.agentEvents().find((event) => event.type === "tool_execution_end")).toMatchObject({ result: { details: { unwritable: "[unwritable: not today]", kept: 1 } } });
    const watcher = await open(url);
    await watcher.request({ type: "attach", session: "s" });
    expect(snapshots(watcher)[0]?.state.messages).toHaveLength(4);
    expect(await watcher.request({ type: "prompt", input: "again" })).toMatchObject({ type: "ack" });
    await waitFor(() => watcher.agentEvents().some((event) => event.type === "agent_end"), "the second run's agent_end");
  });
});

describe("refusals a browser can explain", () => {
  it("closes a browser's socket with 4401 or 4403 and a reason, and answers other clients with HTTP 401 or 403", async () => {
    const { url } = await start({ auth: (token) => token === "s3cret", allowedOrigins: ["http://app.example"] });
    const wrongToken = await open(`${url}?token=nope`, { origin: "http://app.example" });
    await waitFor(() => wrongToken.closeCode, "the close");
    expect([wrongToken.closeCode, wrongToken.closeReason]).toEqual([4401, "Unauthorized"]);
    const foreign = await open(`${url}?token=s3cret`, { origin: "http://evil.example" });
    await waitFor(() => foreign.closeCode, "the close");
    expect([foreign.closeCode, foreign.closeReason]).toEqual([4403, "Origin not allowed"]);
    expect(foreign.frames).toEqual([]);
    const allowed = await open(`${url}?token=s3cret`, { origin: "http://app.example" });
    expect(await allowed.request({ type: "attach", session: "s" })).toMatchObject({ type: "ack" });
  });

  it("takes the page's loopback names as one origin", async () => {
    ui = await serveWebUi({ port: 0, heartbeatIntervalMs: 0, createAgent: () => realtimeAgent(["ok"]) });
    const port = new URL(ui.url).port;
    for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`]) {
      const client = await open(`ws://127.0.0.1:${port}/ws`, { origin });
      expect(await client.request({ type: "attach" })).toMatchObject({ type: "ack" });
    }
    const foreign = await open(`ws://127.0.0.1:${port}/ws`, { origin: `http://localhost:${Number(port) + 1}` });
    await waitFor(() => foreign.closeCode, "the close");
    expect(foreign.closeCode).toBe(4403);
  });
});
