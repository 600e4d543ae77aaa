import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { parseClientFrame } from "../../src/protocol/protocol-schemas.js";
import { ClientConnection, type SendableSocket } from "../../src/server/client-connection.js";
import { SessionHub } from "../../src/server/session-hub.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";

/** A socket that takes every frame, or throws on every send once `broken`. */
class Socket implements SendableSocket {
  readonly sent: string[] = [];
  readyState = 1;
  bufferedAmount = 0;
  constructor(private readonly broken: boolean) {}
  send(data: string, callback: (error?: Error) => void): void {
    if (this.broken) throw new Error("the socket broke");
    this.sent.push(data);
    callback();
  }
}

describe("SessionHub publishing (issue 27, item 2)", () => {
  it("drops a client whose send throws, with the reason, and the other client gets every event", async () => {
    const agent = new Agent({ model: scriptedModel(["hello there"]) });
    const hub = new SessionHub("s", agent);
    const healthySocket = new Socket(false);
    const drops: string[] = [];
    const healthy = new ClientConnection(healthySocket, () => "{}");
    const broken = new ClientConnection(new Socket(true), () => "{}", {}, () => undefined, (reason) => drops.push(reason));
    hub.attach(healthy, 0);
    hub.attach(broken, 0);

    await agent.prompt("hi");

    expect(drops).toStrictEqual(["An event could not be sent to this client: the socket broke"]);
    expect(hub.clientCount).toBe(1);
    const types = healthySocket.sent.map((json) => (JSON.parse(json) as { type: string; event?: { type: string } }).event?.type ?? "update");
    expect(types.at(0)).toBe("agent_start");
    expect(types.at(-1)).toBe("agent_end");
    hub.close();
  });
});

describe("parseClientFrame on a frame nested too deep", () => {
  it("answers invalid_frame before the schema checks, which recurse", () => {
    const deep = `{"type": "prompt", "id": "p1", "input": [{"role": "user", "content": ${"[".repeat(6000)}${"]".repeat(6000)}, "timestamp": 0}]}`;
    expect(parseClientFrame(deep)).toStrictEqual({ ok: false, code: "invalid_frame", message: "The frame's JSON values nest deeper than 128 levels." });
  });
});
