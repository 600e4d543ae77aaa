import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { Agent } from "../../src/agent/agent.js";
import { MessageDeltaEncoder } from "../../src/protocol/message-delta.js";
import { ClientConnection } from "../../src/server/client-connection.js";
import { ProtocolDowngrade } from "../../src/server/protocol-downgrade.js";
import { type AgentServer, serveAgents } from "../../src/server/index.js";
import type { AgentEvent } from "../../src/types.js";
import { argumentsGate, gatedArgumentsModel, writeFileTool } from "../helpers/gated-arguments-model.js";
import { streamedCallsArbitrary, streamedReply } from "../helpers/streamed-reply.js";
import { RawClient, waitFor } from "./helpers.js";

/**
 * The frames a session writes for `events` in `protocol` (as SessionHub does: `end` frames,
 * update frames, event frames), with a snapshot at `join` and a merged frame right after it, as
 * JSON strings, after the attach `ack`.
 */
function sessionFrames(events: AgentEvent[], protocol: 2 | 3, join: number): string[] {
  const encoder = new MessageDeltaEncoder({ argumentsFromText: protocol === 3 });
  const frames = [JSON.stringify({ type: "ack", id: "a1", session: "s", resume: "snapshot", epoch: "e", protocol })];
  events.forEach((event, index) => {
    const seq = index + 1;
    if (index === join) {
      const argumentTexts = encoder.argumentTexts();
      frames.push(JSON.stringify({ type: "snapshot", session: "s", seq: index, epoch: "e", state: { streamingMessage: encoder.current }, ...(argumentTexts.length > 0 ? { argumentTexts } : {}) }));
    }
    const end = event.type === "message_end" ? encoder.endPatch(event.message) : undefined;
    if (end !== undefined) return frames.push(JSON.stringify({ type: "end", seq, ...(end.length > 0 ? { patch: end } : {}) }));
    const update = encoder.encode(event);
    if (update === undefined) return frames.push(JSON.stringify({ type: "event", seq, event }));
    if (index !== join + 1) return frames.push(JSON.stringify({ ...update, seq }));
    // A slow client's merged frame: the whole message, and in protocol 3 the argument texts.
    const argumentTexts = encoder.argumentTexts();
    return frames.push(JSON.stringify({ type: "update", seq, first: seq, event: update.event, message: encoder.current, ...(argumentTexts.length > 0 ? { argumentTexts } : {}) }));
  });
  return frames;
}

describe("ProtocolDowngrade: protocol 3 rewritten into 2 for a client that reads only 2", () => {
  it("gives exactly the frames a protocol-2 session writes, snapshots and merged frames included", () => {
    fc.assert(
      fc.property(streamedCallsArbitrary, fc.nat(), (calls, joinSeed) => {
        const events = streamedReply(calls);
        const join = 1 + (joinSeed % (events.length - 3));
        const downgrade = new ProtocolDowngrade();
        const rewritten = sessionFrames(events, 3, join).map((json) => JSON.parse(downgrade.frame(json)) as unknown);
        expect(rewritten).toStrictEqual(sessionFrames(events, 2, join).map((json) => JSON.parse(json) as unknown));
      }),
      { numRuns: 300 },
    );
  });

  it("leaves a protocol-2 session's frames as they are, and passes unchanged frames on without serializing them again", () => {
    const events = streamedReply([{ text: '{"path":"a.txt","content":"hello"}', cuts: [5, 17] }]);
    const downgrade = new ProtocolDowngrade();
    for (const json of sessionFrames(events, 2, 3)) expect(downgrade.frame(json)).toBe(json);
  });

  it("passes the events it does not follow on unread (a tool's result, a run's end: the largest frames)", () => {
    const downgrade = new ProtocolDowngrade();
    downgrade.frame(JSON.stringify({ type: "ack", id: "a1", session: "s", resume: "snapshot", epoch: "e", protocol: 3 }));
    // Not JSON past its start: read, it would throw.
    const unread = '{"type":"event","seq":5,"event":{"type":"tool_execution_end","result":{"content":[{"type":"text","text":"… a megabyte';
    expect(downgrade.frame(unread)).toBe(unread);
    expect(() => downgrade.frame('{"type":"event","seq":6,"event":{"type":"message_start","message":{')).toThrow();
  });

  it("drops a client whose frame it cannot follow, instead of throwing where the socket's callback would end the process", () => {
    const sent: string[] = [];
    const socket = { readyState: 1, bufferedAmount: 0, send: (data: string, callback: (error?: Error) => void) => (sent.push(data), callback()) };
    const broken: string[] = [];
    const connection = new ClientConnection(socket, () => "{}", {}, undefined, (reason) => broken.push(reason));
    connection.readsOnlyProtocol2();
    connection.sendFrame({ type: "ack", id: "a1", session: "s", resume: "snapshot", epoch: "e", protocol: 3 });
    // A `j` operation for a message the client was never given.
    expect(() => connection.sendEvent({ seq: 1, type: "message_update", json: '{"type":"update","seq":1,"event":{"type":"toolcall_delta","contentIndex":0,"delta":"{"},"patch":[{"i":0,"k":"arguments","j":1}]}' })).not.toThrow();
    expect(broken).toStrictEqual(["A frame could not be rewritten into protocol 2 for this client: Update frame 1 arrived outside a streaming message."]);
    expect(sent).toStrictEqual(['{"type":"ack","id":"a1","session":"s","resume":"snapshot","epoch":"e","protocol":2}']);
  });
});

describe("serveAgents in protocol 3 (its default) with a client that reads only 2", () => {
  let server: AgentServer | undefined;
  const clients: RawClient[] = [];

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await server?.close();
  });

  it("sends that client protocol 2 (whole arguments, message_end events), the same events, and a snapshot instead of a replay", async () => {
    const written = { path: "notes.txt", content: "lorem ipsum ".repeat(3000) };
    // The model never reaches its gate: it pauses only at an offset past the end.
    server = await serveAgents({ port: 0, createAgent: () => new Agent({ model: gatedArgumentsModel(JSON.stringify(written), Infinity, () => argumentsGate().gate), tools: [writeFileTool] }) });
    const current = await RawClient.open(server.url);
    const legacy = await RawClient.open(server.url, {}, []);
    clients.push(current, legacy);
    expect(await current.request({ type: "attach", session: "s" })).toMatchObject({ type: "ack", protocol: 3 });
    expect(await legacy.request({ type: "attach", session: "s" })).toMatchObject({ type: "ack", protocol: 2 });
    await current.request({ type: "prompt", input: "Write my notes" });
    await waitFor(() => current.hasEvent("agent_end") && legacy.hasEvent("agent_end"), "both clients to see the run end");

    const legacyJson = JSON.stringify(legacy.frames);
    expect(legacyJson).not.toContain('"j":1');
    expect(legacy.frames.some((frame) => frame.type === "end")).toBe(false);
    expect(current.frames.some((frame) => frame.type === "end")).toBe(true);
    expect(legacy.agentEvents()).toStrictEqual(current.agentEvents());
    const ends = legacy.agentEvents().filter((event) => event.type === "message_end" && event.message.role === "assistant");
    expect(ends[0]).toMatchObject({ message: { content: [{ type: "text" }, { type: "toolCall", arguments: written }] } });

    // Resuming, the client that reads only 2 starts from a snapshot; the other replays from the log.
    const lastSeq = server.session("s")?.lastSeq ?? 0;
    const epoch = (legacy.frames[0] as { epoch?: string }).epoch;
    const legacyAgain = await RawClient.open(server.url, {}, []);
    const currentAgain = await RawClient.open(server.url);
    clients.push(legacyAgain, currentAgain);
    expect(await legacyAgain.request({ type: "attach", session: "s", lastSeq: lastSeq - 5, epoch })).toMatchObject({ resume: "snapshot", protocol: 2 });
    expect(await currentAgain.request({ type: "attach", session: "s", lastSeq: lastSeq - 5, epoch })).toMatchObject({ resume: "replay", protocol: 3 });
  });

  it("selects rxagent.3 among other subprotocols, and another offered alone as ws would", async () => {
    server = await serveAgents({ port: 0, createAgent: () => new Agent({ model: gatedArgumentsModel("{}", Infinity, () => argumentsGate().gate) }) });
    const selected = async (protocols: string[]) => {
      const socket = new WebSocket(server?.url ?? "", protocols);
      await new Promise((resolve, reject) => (socket.once("open", resolve), socket.once("error", reject)));
      const protocol = socket.protocol;
      socket.close();
      return protocol;
    };
    expect(await selected(["chat", "rxagent.3"])).toBe("rxagent.3");
    expect(await selected(["chat"])).toBe("chat");
    expect(await selected([])).toBe("");
  });
});
