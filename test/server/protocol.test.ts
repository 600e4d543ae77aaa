import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import { assertContiguous, RawClient, realtimeAgent, waitFor } from "./helpers.js";

let server: AgentServer | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await server?.close();
  server = undefined;
});

/** `protocols`: the subprotocols offered (by default `rxagent.3`); `[]` for a client that reads only protocol 2. */
async function open(protocols?: string[]): Promise<RawClient> {
  const client = await RawClient.open((server as AgentServer).url, {}, protocols);
  clients.push(client);
  return client;
}

describe("serveAgents protocol", () => {
  it("streams a run to every client of a session with contiguous sequence numbers", async () => {
    server = await serveAgents({ port: 0, createAgent: () => realtimeAgent(["Hello from the agent, streaming word by word."]) });
    const first = await open();
    const second = await open();
    const attach = await first.request({ type: "attach", session: "s1" });
    expect(attach).toEqual({ type: "ack", id: attach.id, session: "s1", resume: "snapshot", epoch: expect.any(String), protocol: 3 });
    expect((await second.request({ type: "attach", session: "s1" })).type).toBe("ack");
    // A fresh attach gets the state as it stands, then live events.
    expect(first.frames[1]).toMatchObject({ type: "snapshot", session: "s1", seq: 0, state: { messages: [], isStreaming: false } });

    const prompt = await second.request({ type: "prompt", input: "Hi" });
    expect(prompt).toEqual({ type: "ack", id: prompt.id });
    await waitFor(() => first.hasEvent("agent_end") && second.hasEvent("agent_end"), "agent_end on both clients");

    expect(first.eventTypes()).toEqual(second.eventTypes());
    expect(first.eventTypes().slice(0, 6)).toEqual(["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_update"]);
    expect(first.eventTypes().slice(-4)).toEqual(["message_update", "message_end", "turn_end", "agent_end"]);
    assertContiguous(first.events(), 0);
    assertContiguous(second.events(), 0);
    // The ack precedes the events its command caused.
    const ackIndex = second.frames.findIndex((frame) => frame.type === "ack" && frame.id === prompt.id);
    expect(second.frames.findIndex((frame) => frame.type === "event")).toBeGreaterThan(ackIndex);
    expect(server.session("s1")?.agent.messages.map((message) => (message as { role: string }).role)).toEqual(["user", "assistant"]);
  });

  it("refuses a protocol version it cannot speak, before it listens", async () => {
    for (const protocol of [4, 1, "3"]) {
      await expect(serveAgents({ port: 0, createAgent: () => realtimeAgent(["hi"]), protocol: protocol as never })).rejects.toThrow(`serveAgents' protocol must be 2 or 3, got ${JSON.stringify(protocol)}.`);
    }
  });

  it("starts a new session with a server-chosen id when attach names none", async () => {
    server = await serveAgents({ port: 0, createAgent: () => realtimeAgent([]) });
    const client = await open();
    const ack = await client.request({ type: "attach" });
    expect(ack).toMatchObject({ type: "ack", session: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(server.sessionIds()).toEqual([(ack as { session: string }).session]);
  });

  it("answers every kind of bad frame with an error frame and keeps the connection and session", async () => {
    server = await serveAgents({
      port: 0,
      createAgent: (id) => (id === "nope" ? undefined : realtimeAgent(["A fairly long reply that keeps the agent busy for a while."], 20)),
    });
    const client = await open();
    const errors: unknown[] = [];
    const expectError = async (frame: string | Record<string, unknown>, code: string, message: RegExp, id?: string) => {
      const before = client.frames.length;
      if (typeof frame === "string") client.socket.send(frame);
      else client.send(frame);
      const reply = await waitFor(() => client.frames.slice(before).find((candidate) => candidate.type === "error"), `error ${code}`);
      expect(reply).toMatchObject({ type: "error", code, ...(id === undefined ? {} : { id }) });
      expect((reply as { message: string }).message).toMatch(message);
      errors.push(reply);
    };

    await expectError("{not json", "invalid_json", /not valid JSON/);
    await expectError("[1,2]", "invalid_frame", /JSON object/);
    await expectError({ type: "dance", id: "x1" }, "unknown_type", /Unknown command type "dance".*attach, prompt/, "x1");
    await expectError({ type: "prompt", id: "x2", input: "hi" }, "not_attached", /Send "attach" before "prompt"/, "x2");
    await expectError({ type: "attach", id: "x3", session: "nope" }, "unknown_session", /No session "nope"/, "x3");
    await expectError({ type: "attach", id: "x4", session: "bad id!" }, "invalid_frame", /\/session/, "x4");
    expect((await client.request({ type: "attach", session: "ok" })).type).toBe("ack");
    await expectError({ type: "prompt", id: "x5", input: 42 }, "invalid_frame", /\/input/, "x5");
    await expectError({ type: "prompt", id: "x6", input: "hi", extra: true }, "invalid_frame", /Invalid "prompt" command/, "x6");
    await expectError({ type: "abort", id: "x7", clearFollowUps: "yes" }, "invalid_frame", /\/clearFollowUps/, "x7");
    await expectError({ type: "continue", id: "x8" }, "invalid_state", /No messages to continue from: the transcript is empty/, "x8");
    await expectError({ type: "prompt", id: "x10", input: "  \n " }, "invalid_frame", /\/input is empty/, "x10");
    await expectError({ type: "steer", id: "x11", input: { text: "", images: [] } }, "invalid_frame", /\/input is empty/, "x11");
    const binaryBefore = client.frames.length;
    client.socket.send(Buffer.from(JSON.stringify({ type: "prompt", id: "x12", input: "as binary" })), { binary: true });
    const binaryReply = await waitFor(() => client.frames.slice(binaryBefore).find((frame) => frame.type === "error"), "the binary frame's error");
    expect(binaryReply).toEqual({ type: "error", code: "invalid_frame", message: expect.stringMatching(/Binary frames are not accepted/) });
    errors.push(binaryReply);
    expect(server.session("ok")?.agent.messages).toEqual([]);
    expect((await client.request({ type: "prompt", input: "go" })).type).toBe("ack");
    await expectError({ type: "prompt", id: "x9", input: "again" }, "busy", /while the agent is running.*steer/, "x9");

    // Still connected, still the same session: the run finishes and is delivered.
    await waitFor(() => client.hasEvent("agent_end"), "agent_end after the errors");
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    expect(errors).toHaveLength(14);
  });

  it("acks an abort before the agent_end it causes", async () => {
    server = await serveAgents({ port: 0, createAgent: () => realtimeAgent(["A reply long enough to be cut off in the middle of it."], 20) });
    const client = await open();
    await client.request({ type: "attach", session: "s" });
    await client.request({ type: "prompt", input: "go" });
    await waitFor(() => client.hasEvent("message_update"), "streaming");
    const abort = await client.request({ type: "abort" });
    await waitFor(() => client.hasEvent("agent_end"), "agent_end");
    const ackIndex = client.frames.indexOf(abort);
    const endIndex = client.frames.findIndex((frame) => frame.type === "event" && frame.event.type === "agent_end");
    expect(ackIndex).toBeLessThan(endIndex);
  });

  it("acks steer, follow_up, abort and reset, and reset sends every client a fresh snapshot", async () => {
    const agent = new Agent({ model: scriptedModel(["one", "two"]) });
    server = await serveAgents({ port: 0, createAgent: () => agent });
    const client = await open();
    await client.request({ type: "attach", session: "s" });
    expect(await client.request({ type: "prompt", input: "first" })).toMatchObject({ type: "ack" });
    await waitFor(() => client.hasEvent("agent_end"), "first run");
    expect(await client.request({ type: "follow_up", input: { text: "later" } })).toMatchObject({ type: "ack" });
    expect(agent.state.queuedFollowUp).toBe(1);
    expect(await client.request({ type: "steer", input: "now" })).toMatchObject({ type: "ack" });
    expect(await client.request({ type: "abort", clearFollowUps: true })).toMatchObject({ type: "ack" });
    expect(agent.state.queuedFollowUp + agent.state.queuedSteering).toBe(0);
    expect(await client.request({ type: "reset" })).toMatchObject({ type: "ack" });
    const snapshot = await waitFor(() => client.frames.filter((frame) => frame.type === "snapshot")[1], "snapshot after reset");
    expect(snapshot).toMatchObject({ type: "snapshot", state: { messages: [] } });
    expect(agent.messages).toEqual([]);
  });
});
