import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { serveAgents, type AgentServer } from "../../src/server/index.js";
import { connectAgent, type AgentClient } from "../../src/client/index.js";
import { RemoteCommandError } from "../../src/client/client.js";
import type { ServerFrame } from "../../src/protocol/protocol-schemas.js";
import { assertContiguous, carriedType, isEventCarrier, RawClient, realtimeAgent, waitFor } from "./helpers.js";

const LONG_REPLY = "This reply streams one word at a time so that there is time to drop the connection in the middle of it. ".repeat(3);

let server: AgentServer | undefined;
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await server?.close();
  server = undefined;
});

async function open(): Promise<RawClient> {
  const client = await RawClient.open((server as AgentServer).url);
  cleanups.push(() => client.close());
  return client;
}

describe("reconnect and resume", () => {
  it("replays exactly the missed events to a client that reattaches with its last sequence number", async () => {
    server = await serveAgents({ port: 0, createAgent: () => realtimeAgent([LONG_REPLY]) });
    const witness = await open();
    await witness.request({ type: "attach", session: "s" });
    const leaver = await open();
    await leaver.request({ type: "attach", session: "s" });
    await leaver.request({ type: "prompt", input: "go" });
    await waitFor(() => leaver.events().length >= 10, "ten events before leaving");
    await leaver.close();
    const seen = leaver.events();
    const lastSeq = assertContiguous(seen, 0);
    await waitFor(() => witness.events().length >= lastSeq + 10, "the run to go on without the leaver");

    const back = await open();
    const ack = await back.request({ type: "attach", session: "s", lastSeq });
    expect(ack).toMatchObject({ type: "ack", session: "s", resume: "replay" });
    await waitFor(() => witness.hasEvent("agent_end") && back.hasEvent("agent_end"), "agent_end");
    expect(back.frames.some((frame) => frame.type === "snapshot")).toBe(false);
    assertContiguous(back.events(), lastSeq);
    // Together, the two connections saw exactly what the client that stayed saw.
    expect([...seen, ...back.events()]).toEqual(witness.events());
  });

  it("sends a snapshot to a client too far behind for the log, then contiguous events", async () => {
    server = await serveAgents({ port: 0, eventLog: { maxEvents: 10 }, createAgent: () => realtimeAgent([LONG_REPLY, "Second reply."]) });
    const client = await open();
    await client.request({ type: "attach", session: "s" });
    await client.request({ type: "prompt", input: "go" });
    await waitFor(() => client.hasEvent("agent_end"), "first run");
    const total = client.events().length;
    expect(total).toBeGreaterThan(20);

    const late = await open();
    expect(await late.request({ type: "attach", session: "s", lastSeq: 2 })).toMatchObject({ resume: "snapshot" });
    const snapshot = await waitFor(() => late.frames.find((frame): frame is Extract<ServerFrame, { type: "snapshot" }> => frame.type === "snapshot"), "snapshot");
    expect(snapshot.seq).toBe(total);
    expect(snapshot.state.messages).toEqual(server.session("s")?.agent.messages);
    await late.request({ type: "prompt", input: "again" });
    await waitFor(() => late.events().some((frame) => carriedType(frame) === "agent_end"), "second run");
    assertContiguous(late.events(), total);

    // A sequence number from the future (the server restarted) also gets a snapshot.
    const stranger = await open();
    expect(await stranger.request({ type: "attach", session: "s", lastSeq: 10_000 })).toMatchObject({ resume: "snapshot" });
  });
});

describe("connectAgent", () => {
  function track(client: AgentClient): AgentClient {
    cleanups.push(() => client.close());
    return client;
  }

  it("mirrors the server's events and state, and maps acks and errors onto Promises", async () => {
    server = await serveAgents({ port: 0, createAgent: () => realtimeAgent(["Hello there, client.", "Second."]) });
    const client = track(connectAgent(server.url, { session: "c", WebSocket }));
    const types: string[] = [];
    client.events$.subscribe((event) => types.push(event.type));
    expect(await client.ready).toBe("c");
    await client.prompt("Hi");
    await expect(client.prompt("too soon")).rejects.toMatchObject({ name: "RemoteCommandError", code: "busy" });
    await client.steer("be brief");
    await waitFor(() => types.includes("agent_end"), "agent_end");
    const agent = server.session("c")?.agent;
    expect(client.state.messages).toEqual(agent?.messages);
    expect(client.state.isStreaming).toBe(false);
    expect(types[0]).toBe("agent_start");
    await expect(client.continue()).rejects.toBeInstanceOf(RemoteCommandError);
  });

  it("reconnects after a dropped socket and resumes without duplicates or gaps", async () => {
    server = await serveAgents({ port: 0, createAgent: () => realtimeAgent([LONG_REPLY]) });
    const sockets: WebSocket[] = [];
    // Records each socket so the test can kill one like a network failure would.
    class RecordingWebSocket extends WebSocket {
      constructor(url: string, protocols?: string[]) {
        super(url, protocols);
        sockets.push(this);
      }
    }
    const client = track(connectAgent(server.url, { WebSocket: RecordingWebSocket, reconnect: { initialDelayMs: 20 } }));
    const session = await client.ready;
    const frames: ServerFrame[] = [];
    const statuses: string[] = [];
    client.frames$.subscribe((frame) => frames.push(frame));
    client.status$.subscribe((status) => statuses.push(status));
    const witness = await open();
    await witness.request({ type: "attach", session });

    await client.prompt("go");
    await waitFor(() => client.lastSeq >= 15, "some events");
    sockets[0]?.terminate();
    await waitFor(() => witness.hasEvent("agent_end"), "the run to end");
    await waitFor(() => client.state.messages.length === 2 && !client.state.isStreaming, "the client to catch up");

    expect(sockets).toHaveLength(2);
    expect(statuses).toEqual(["open", "reconnecting", "open"]);
    const events = frames.filter(isEventCarrier);
    assertContiguous(events, 0);
    expect(events.map((frame) => frame.seq)).toEqual(witness.events().map((frame) => frame.seq));
    expect(client.state.messages).toEqual(server.session(session)?.agent.messages);
  });
});
