import { describe, expect, it } from "vitest";
import { connectAgent } from "../../src/client/index.js";
import type { SnapshotFrame } from "../../src/protocol/protocol-schemas.js";
import { ScriptedSocket } from "./scripted-socket.js";
import { initialAgentState } from "../../src/agent/agent-state.js";
import type { AgentEvent, AgentMessage } from "../../src/types.js";

const user: AgentMessage = { role: "user", content: "go", timestamp: 1 };
const end: Extract<AgentEvent, { type: "agent_end" }> = { type: "agent_end", messages: [user], reason: "idle" };

function snapshot(seq: number, isStreaming: boolean, lastAgentEnd?: SnapshotFrame["lastAgentEnd"]): SnapshotFrame {
  const state = { ...initialAgentState(isStreaming ? [] : [user]), isStreaming };
  return { type: "snapshot", session: "s", seq, epoch: "e", state, ...(lastAgentEnd === undefined ? {} : { lastAgentEnd }) };
}

/** A client attached to a scripted server, and the types of the events it emitted. */
async function attached(first: SnapshotFrame) {
  const client = connectAgent("ws://scripted", { WebSocket: ScriptedSocket, session: "s", reconnect: false });
  const seen: string[] = [];
  client.events$.subscribe((event) => seen.push(event.type));
  await new Promise<void>((resolve) => queueMicrotask(resolve));
  const socket = ScriptedSocket.last!;
  const attach = socket.sent.find((frame) => frame.type === "attach")!;
  socket.serve({ type: "ack", id: attach.id!, session: "s", epoch: "e", protocol: 2, resume: "snapshot" });
  socket.serve(first);
  await client.ready;
  return { client, socket, seen };
}

describe("connectAgent moved to a snapshot while it followed a run", () => {
  it("emits the run's agent_end when the snapshot covers it (a resync past the end): a consumer waiting for it is not left waiting", async () => {
    const { client, socket, seen } = await attached(snapshot(0, false));
    socket.serve({ type: "event", seq: 1, event: { type: "agent_start" } });
    socket.serve(snapshot(9, false, { seq: 9, event: end }));
    expect(seen).toStrictEqual(["agent_start", "agent_end"]);
    expect(client.state.isStreaming).toBe(false);
    // Later events go on as usual, and a second snapshot tells nothing again.
    socket.serve(snapshot(9, false, { seq: 9, event: end }));
    expect(seen).toStrictEqual(["agent_start", "agent_end"]);
    client.close();
  });

  it("emits the end of a run that was already running at attach (known from the first snapshot)", async () => {
    const { client, socket, seen } = await attached(snapshot(4, true));
    socket.serve(snapshot(12, false, { seq: 12, event: end }));
    expect(seen).toStrictEqual(["agent_end"]);
    client.close();
  });

  it("tells nothing when it saw the run end, when no run was open, or when the snapshot's last end is older than the run it follows", async () => {
    const { client, socket, seen } = await attached(snapshot(0, false));
    socket.serve({ type: "event", seq: 1, event: { type: "agent_start" } });
    socket.serve({ type: "event", seq: 2, event: end });
    socket.serve(snapshot(5, false, { seq: 2, event: end }));
    expect(seen).toStrictEqual(["agent_start", "agent_end"]);
    // A run starts after the last end the snapshot knows, and is still running in it.
    socket.serve({ type: "event", seq: 6, event: { type: "agent_start" } });
    socket.serve(snapshot(8, true, { seq: 2, event: end }));
    expect(seen).toStrictEqual(["agent_start", "agent_end", "agent_start"]);
    client.close();
  });
});
