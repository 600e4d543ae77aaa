import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { serveAgents } from "../../src/server/index.js";
import type { AgentMessage, AssistantMessage, TranscriptStore } from "../../src/types.js";
import { RawClient, realtimeAgent, waitFor } from "./helpers.js";

describe("graceful shutdown", () => {
  it("aborts the active run, delivers agent_end, closes with 1001 and keeps the transcript", async () => {
    const agents: Agent[] = [];
    const closedSessions: string[] = [];
    const server = await serveAgents({
      port: 0,
      createAgent: () => {
        const agent = realtimeAgent(["A long answer that will be cut short by the server shutting down in the middle of it. ".repeat(4)]);
        agents.push(agent);
        return agent;
      },
      onSessionClose: (id) => closedSessions.push(id),
    });
    const url = server.url;
    const client = await RawClient.open(url);
    await client.request({ type: "attach", session: "s" });
    await client.request({ type: "prompt", input: "talk" });
    await waitFor(() => client.events().length > 8, "the run to be under way");

    await server.close();

    expect(client.closeCode).toBe(1001);
    const types = client.eventTypes();
    expect(types.slice(-4)).toEqual(["message_update", "message_end", "turn_end", "agent_end"]);
    const agent = agents[0] as Agent;
    expect(agent.isRunning).toBe(false);
    const last = agent.messages.at(-1) as AssistantMessage;
    expect(agent.messages).toHaveLength(2);
    expect(last.stopReason).toBe("aborted");
    expect(last.content.length).toBeGreaterThan(0);
    expect(closedSessions).toEqual(["s"]);
    // No new connections after close.
    await expect(RawClient.open(url)).rejects.toThrow(/ECONNREFUSED/);
  });

  it("closes idle servers at once", async () => {
    // A shutdown timeout longer than the test's: a close that waited for it would time the test
    // out, so no wall-clock bound is needed to tell "at once".
    const server = await serveAgents({ port: 0, shutdownTimeoutMs: 10 * 60_000, createAgent: () => realtimeAgent([]) });
    const client = await RawClient.open(server.url);
    await client.request({ type: "attach" });
    await server.close();
    expect(client.closeCode).toBe(1001);
  });

  it("hands an agent that createAgent made while the server shut down to onSessionClose", async () => {
    let release: () => void = () => undefined;
    const created = new Promise<void>((resolve) => (release = resolve));
    const agent = realtimeAgent(["ok"]);
    const closed: [string, Agent][] = [];
    let creating = false;
    const server = await serveAgents({
      port: 0,
      heartbeatIntervalMs: 0,
      createAgent: async () => {
        creating = true;
        await created;
        return agent;
      },
      onSessionClose: (id, closedAgent) => closed.push([id, closedAgent]),
    });
    const client = await RawClient.open(server.url);
    client.send({ type: "attach", session: "late" });
    // The attach has reached the server when it asks for the agent (a fixed sleep missed it under load).
    await waitFor(() => creating, "the server to create the session's agent");
    const closing = server.close();
    release();
    await closing;
    await waitFor(() => closed.length > 0, "the session close");
    expect(closed).toEqual([["late", agent]]);
    expect(server.sessionIds()).toEqual([]);
  });
});

describe("an onSessionClose that fails", () => {
  // Thrown, it refused the eviction's new session ("createAgent failed: …") and left the rest of a
  // shutdown's sessions unreported; rejected, it was an unhandled rejection, which ends the process.
  it.each(["throws", "rejects"] as const)("%s: is reported to onWarning, and eviction and shutdown go on", async (failure) => {
    const closed: string[] = [];
    const warnings: string[] = [];
    const server = await serveAgents({
      port: 0,
      heartbeatIntervalMs: 0,
      maxSessions: 2,
      createAgent: () => realtimeAgent(["ok"]),
      onSessionClose: (id) => {
        closed.push(id);
        if (failure === "throws") throw new Error(`cannot save ${id}`);
        return Promise.reject(new Error(`cannot save ${id}`)) as never;
      },
      onWarning: (message) => warnings.push(message),
    });
    for (const session of ["a", "b"]) {
      const client = await RawClient.open(server.url);
      expect((await client.request({ type: "attach", session })).type).toBe("ack");
      await client.close();
    }
    const third = await RawClient.open(server.url);
    // The server is full: "a", the least recently used, is closed to make room.
    expect(await third.request({ type: "attach", session: "c" })).toMatchObject({ type: "ack", session: "c" });
    await server.close();
    await waitFor(() => warnings.length === 3, "three warnings");
    expect(closed).toEqual(["a", "b", "c"]);
    expect(warnings).toEqual(["onSessionClose failed: cannot save a", "onSessionClose failed: cannot save b", "onSessionClose failed: cannot save c"]);
  });
});

describe("Agent (found while building the bridge)", () => {
  // Regression: `dispose()` used to call `reset()`, which cleared the store, so an app that
  // disposed its agents on shutdown wiped the durable transcripts it kept.
  it("dispose() leaves the transcript store alone", () => {
    const stored: AgentMessage[] = [];
    let cleared = 0;
    const store: TranscriptStore = {
      load: async () => [...stored],
      append: (message) => stored.push(message),
      clear: () => {
        cleared++;
        stored.length = 0;
      },
    };
    const agent = new Agent({ model: scriptedModel(["hi"]), store });
    agent.prompt("hello");
    expect(stored).toHaveLength(2);
    agent.dispose();
    expect(cleared).toBe(0);
    expect(stored).toHaveLength(2);
  });
});
