import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { connectAgent, type ConnectionStatus } from "../../src/client/index.js";
import { acceptToken, type AgentServer, serveAgents } from "../../src/server/index.js";
import { realtimeAgent } from "../server/helpers.js";

let server: AgentServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A `ws` WebSocket that sends an Origin header, as a browser would. */
function browserLike(origin: string) {
  return class extends WebSocket {
    constructor(url: string, protocols?: string[]) {
      super(url, protocols, { origin });
    }
  };
}

describe("connectAgent refused", () => {
  it.each([
    ["without a token (HTTP 401)", {}, "unauthorized"],
    ["with a wrong token (HTTP 401)", { token: "wrong" }, "unauthorized"],
    ["from a foreign origin (4403)", { token: "s3cret", WebSocket: browserLike("http://evil.example") }, "forbidden_origin"],
    ["with a wrong token in a browser (4401)", { token: "wrong", WebSocket: browserLike("http://app.example") }, "unauthorized"],
  ])("%s: rejects ready with the reason and stops reconnecting", async (_name, options, code) => {
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, auth: acceptToken("s3cret"), allowedOrigins: ["http://app.example"], createAgent: () => realtimeAgent(["ok"]) });
    const statuses: ConnectionStatus[] = [];
    const client = connectAgent(server.url, { WebSocket, session: "s", reconnect: { initialDelayMs: 5 }, ...options });
    client.status$.subscribe((status) => statuses.push(status));
    await expect(client.ready).rejects.toMatchObject({ name: "RemoteCommandError", code });
    expect(statuses).toEqual(["connecting", "closed"]);
    expect(server.sessionIds()).toEqual([]);
  });

  it("gets in with the right token", async () => {
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, auth: acceptToken("s3cret"), createAgent: () => realtimeAgent(["ok"]) });
    const client = connectAgent(server.url, { WebSocket, session: "s", token: "s3cret" });
    expect(await client.ready).toBe("s");
    client.close();
  });
});
