import { describe, expect, it } from "vitest";
import { initialAgentState } from "../../src/agent/agent-state.js";
import { connectAgent } from "../../src/client/index.js";
import type { SnapshotFrame } from "../../src/protocol/protocol-schemas.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AgentEvent } from "../../src/types.js";
import { ScriptedSocket } from "./scripted-socket.js";

const snapshot = (seq: number): SnapshotFrame => ({ type: "snapshot", session: "s", seq, epoch: "e", state: initialAgentState([]) });

describe("connectAgent given a frame it cannot read or apply", () => {
  it("starts again from a snapshot (an attach without lastSeq) instead of throwing out of the socket's handler", async () => {
    const client = connectAgent("ws://scripted", { WebSocket: ScriptedSocket, session: "s", reconnect: false });
    const seen: AgentEvent[] = [];
    client.events$.subscribe((event) => seen.push(event));
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    const socket = ScriptedSocket.last!;
    const attachIds = () => socket.sent.filter((frame) => frame.type === "attach").map((frame) => frame as { id: string; lastSeq?: number });
    socket.serve({ type: "ack", id: attachIds()[0]!.id, session: "s", epoch: "e", protocol: 3, resume: "snapshot" });
    socket.serve(snapshot(3));
    await client.ready;

    // An `end` frame for a message this client does not hold, then text that is not JSON.
    expect(() => socket.serve({ type: "end", seq: 4 })).not.toThrow();
    expect(attachIds()).toHaveLength(2);
    expect(attachIds()[1]).not.toHaveProperty("lastSeq");
    socket.serve({ type: "ack", id: attachIds()[1]!.id, session: "s", epoch: "e", protocol: 3, resume: "snapshot" });
    socket.serve(snapshot(4));
    expect(() => socket.emitRaw("{not json")).not.toThrow();
    expect(attachIds()).toHaveLength(3);
    socket.serve({ type: "ack", id: attachIds()[2]!.id, session: "s", epoch: "e", protocol: 3, resume: "snapshot" });
    socket.serve(snapshot(4));

    // Back on track: the next message streams and ends as usual.
    const message = { role: "assistant" as const, content: [], api: "a", provider: "p", model: "m", usage: emptyUsage(), stopReason: "stop" as const, timestamp: 1 };
    socket.serve({ type: "event", seq: 5, event: { type: "message_start", message } });
    socket.serve({ type: "end", seq: 6 });
    expect(seen.map((event) => event.type)).toStrictEqual(["message_start", "message_end"]);
    expect(client.lastSeq).toBe(6);
    client.close();
  });
});
