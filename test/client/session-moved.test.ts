import { describe, expect, it } from "vitest";
import { connectAgent } from "../../src/client/index.js";
import { initialAgentState } from "../../src/agent/agent-state.js";
import { ScriptedSocket } from "./scripted-socket.js";

const moved = (id: string) => ({ type: "error" as const, id, code: "session_moved" as const, message: "The session moved to another process before Redis stored this prompt, …; send it again." });

async function attachedClient() {
  const client = connectAgent("ws://scripted", { WebSocket: ScriptedSocket, session: "s", reconnect: false });
  await new Promise<void>((resolve) => queueMicrotask(resolve));
  const socket = ScriptedSocket.last!;
  const attach = socket.sent.find((frame) => frame.type === "attach")!;
  socket.serve({ type: "ack", id: attach.id!, session: "s", epoch: "e", protocol: 2, resume: "snapshot" });
  socket.serve({ type: "snapshot", session: "s", seq: 0, epoch: "e", state: initialAgentState([]) });
  await client.ready;
  return { client, socket };
}

describe("connectAgent and a command answered session_moved (Redis never stored it)", () => {
  it("sends the same command again, and resolves on the ack that follows", async () => {
    const { client, socket } = await attachedClient();
    const prompted = client.prompt("deploy");
    const first = socket.sent.at(-1)!;
    expect(first).toMatchObject({ type: "prompt", input: "deploy" });
    socket.serve(moved(first.id!));
    expect(socket.sent.at(-1)).toStrictEqual(first);
    socket.serve({ type: "ack", id: first.id! });
    await expect(prompted).resolves.toBeUndefined();
    expect(socket.sent.filter((frame) => frame.type === "prompt")).toHaveLength(2);
    client.close();
  });

  it("rejects with session_moved after the fourth such answer (sent 4 times in all)", async () => {
    const { client, socket } = await attachedClient();
    const approved = client.approve("d1");
    const id = socket.sent.at(-1)!.id!;
    for (let answer = 0; answer < 4; answer++) socket.serve(moved(id));
    await expect(approved).rejects.toMatchObject({ name: "RemoteCommandError", code: "session_moved" });
    expect(socket.sent.filter((frame) => frame.type === "approve")).toHaveLength(4);
    client.close();
  });
});
