import { asapScheduler, bufferCount, concatMap, observeOn, from } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { connectAgent, type AgentClient } from "../../src/client/index.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import type { AgentEvent, Model } from "../../src/types.js";
import { RawClient, waitFor } from "../server/helpers.js";

const DELTAS = 10_000;
/** One word per delta: 10 000 deltas, about 60 000 characters. */
const LONG_REPLY = Array.from({ length: DELTAS }, (_, index) => `w${index % 1000} `).join("");

/**
 * The scripted model, its events handed out a hundred per macrotask: a reply of 10 000 deltas
 * streams in well under a second, yet leaves the sockets time to move (and to be cut).
 */
function pacedModel(turns: ScriptedTurn[]): Model {
  const scripted = scriptedModel(turns);
  return {
    ...scripted,
    stream: (context, options) =>
      scripted.stream(context, options).pipe(
        bufferCount(100),
        concatMap((batch) => from(batch).pipe(observeOn(asapScheduler))),
      ),
  };
}

let server: AgentServer | undefined;
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await server?.close();
  server = undefined;
});

function track(client: AgentClient): AgentClient {
  cleanups.push(() => client.close());
  return client;
}

/** Wire text of the events as protocol 1 sent them: each update carried the whole partial message twice. */
function protocol1Bytes(events: AgentEvent[]): number {
  return events.reduce((total, event) => {
    if (event.type !== "message_update") return total + JSON.stringify(event).length;
    const text = event.message.content.reduce((sum, block) => sum + JSON.stringify(block).length, 0);
    return total + 2 * text;
  }, 0);
}

describe("delta frames", () => {
  it("rebuild exactly the agent's events (message and partial included) across a long reply with thinking and a tool call", async () => {
    let agent: Agent | undefined;
    const reply: ScriptedTurn = {
      content: [
        { type: "thinking", thinking: "Plan: answer at length, then call the tool. ".repeat(50) },
        { type: "text", text: LONG_REPLY.slice(0, 10_000) },
        { type: "toolCall", name: "missing_tool", arguments: { city: "Paris", days: [1, 2, 3] } },
      ],
    };
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, createAgent: () => (agent = new Agent({ model: pacedModel([reply, "Done."]) })) });
    const client = track(connectAgent(server.url, { session: "s", WebSocket }));
    const remote: AgentEvent[] = [];
    client.events$.subscribe((event) => remote.push(event));
    const raw = await RawClient.open(server.url);
    cleanups.push(() => raw.close());
    await client.ready;
    await raw.request({ type: "attach", session: "s" });
    const local: AgentEvent[] = [];
    agent?.events$.subscribe((event) => local.push(event));

    await client.prompt("Tell me everything");
    await waitFor(() => remote.some((event) => event.type === "agent_end"), "agent_end at the client", 30_000);
    // The raw socket reads at its own pace: under load it may still be behind the client.
    await waitFor(() => raw.agentEvents().some((event) => event.type === "agent_end"), "agent_end at the raw socket", 30_000);

    expect(local.filter((event) => event.type === "message_update").length).toBeGreaterThan(1600);
    expect(remote).toEqual(local);
    expect(raw.agentEvents()).toEqual(local);
  });

  it("costs O(reply size) on the wire for a 10 000-delta reply, and resumes a client cut off in it from the log", async () => {
    let agent: Agent | undefined;
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, createAgent: () => (agent = new Agent({ model: pacedModel([LONG_REPLY]) })) });
    const sockets: WebSocket[] = [];
    class RecordingWebSocket extends WebSocket {
      constructor(url: string, protocols?: string[]) {
        super(url, protocols);
        sockets.push(this);
      }
    }
    const client = track(connectAgent(server.url, { session: "s", WebSocket: RecordingWebSocket, reconnect: { initialDelayMs: 10 } }));
    const remote: AgentEvent[] = [];
    const resumes: string[] = [];
    client.events$.subscribe((event) => {
      remote.push(event);
      // Cut in the middle of the reply, as a network would.
      if (remote.length === 3000) sockets[0]?.terminate();
    });
    client.frames$.subscribe((frame) => {
      if (frame.type === "ack" && frame.resume) resumes.push(frame.resume);
      if (frame.type === "snapshot") resumes.push(`snapshot@${frame.seq}`);
    });
    await client.ready;
    const watcher = await RawClient.open(server.url);
    cleanups.push(() => watcher.close());
    await watcher.request({ type: "attach", session: "s" });
    const local: AgentEvent[] = [];
    agent?.events$.subscribe((event) => local.push(event));

    await client.prompt("Go on");
    await waitFor(() => remote.some((event) => event.type === "agent_end"), "agent_end at the client", 30_000);
    await waitFor(() => watcher.hasEvent("agent_end"), "agent_end at the watcher", 30_000);

    // Cut at 3000 and back: a replay from the log, no second snapshot.
    expect(sockets).toHaveLength(2);
    expect(resumes).toEqual(["snapshot", "snapshot@0", "replay"]);
    // Comparing every pair of 10 000 long partial messages costs seconds: the types in order,
    // every 500th event and the last ones whole (the first test compares a long reply whole).
    // text_start and text_end are updates too.
    expect(local.filter((event) => event.type === "message_update").length).toBe(DELTAS + 2);
    // What the client missed came from the log: every update as it streamed, or, once the
    // message had ended, one merged update carrying the whole message (as a slow client's).
    const withUpdatesMerged = (events: AgentEvent[]) => events.map((event) => event.type).filter((type, index, types) => type !== "message_update" || types[index - 1] !== "message_update");
    expect(withUpdatesMerged(remote)).toEqual(withUpdatesMerged(local));
    const sample = (events: AgentEvent[]) => events.filter((_, index) => index % 500 === 0);
    expect(sample(remote.slice(0, 3000))).toEqual(sample(local.slice(0, 3000)));
    const lastUpdate = (events: AgentEvent[]) => events.findLast((event) => event.type === "message_update");
    expect(lastUpdate(remote)).toEqual(lastUpdate(local));
    expect(remote.slice(-4)).toEqual(local.slice(-4));

    // O(reply size): each delta once plus a frame's envelope, and the whole reply a few times
    // (message_end, turn_end, agent_end), not the partial message per delta.
    const bound = DELTAS * 120 + 4 * LONG_REPLY.length + 20_000;
    const before = protocol1Bytes(local);
    console.log(`delta frames: ${watcher.receivedBytes} bytes on the wire for ${DELTAS} deltas (bound ${bound}); protocol 1 would have sent ${before}`);
    expect(watcher.receivedBytes).toBeLessThan(bound);
  });

  it("sends a snapshot over 1 MiB in fragments a 1 MiB-limited client takes, and joins them", async () => {
    const big = "x".repeat(700 * 1024);
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, createAgent: () => new Agent({ model: scriptedModel([big, big]) }) });
    const writer = await RawClient.open(server.url);
    cleanups.push(() => writer.close());
    await writer.request({ type: "attach", session: "s" });
    for (const prompt of ["one", "two"]) {
      await writer.request({ type: "prompt", input: prompt });
      await waitFor(() => server?.session("s")?.agent.isRunning === false, "the run to end");
    }
    const limited = await RawClient.open(server.url, { maxPayload: 1024 * 1024 });
    cleanups.push(() => limited.close());
    await limited.request({ type: "attach", session: "s" });
    const snapshot = await waitFor(() => limited.frames.find((frame) => frame.type === "snapshot"), "the snapshot");
    expect(limited.closeCode).toBeUndefined();
    expect(snapshot).toMatchObject({ seq: server.session("s")?.lastSeq, state: { messages: server.session("s")?.agent.messages } });
    // More than one frame's worth reached a client that closes on any frame over 1 MiB.
    expect(limited.receivedBytes).toBeGreaterThan(1024 * 1024);
  });
});
