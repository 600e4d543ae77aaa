import { connect } from "node:net";
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

  it("answers an upgrade whose request target is no URL 401, as one without a token, not 500", async () => {
    server = await serveAgents({ port: 0, heartbeatIntervalMs: 0, auth: acceptToken("s3cret"), createAgent: () => realtimeAgent(["ok"]) });
    const { port } = new URL(server.url);
    const upgrade = (target: string) => `GET ${target} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    for (const target of ["http://[/?token=s3cret", "//[", "http://x:99999/"]) {
      expect(await statusLine(Number(port), upgrade(target))).toBe("HTTP/1.1 401 Unauthorized");
    }
    expect(await statusLine(Number(port), upgrade("/?token=s3cret"))).toBe("HTTP/1.1 101 Switching Protocols");
  });
});

/** Sends `request` on a fresh connection and returns the first line of the answer. */
function statusLine(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let answer = "";
    socket.on("data", (data: Buffer) => {
      answer += data.toString();
      if (answer.includes("\r\n")) {
        socket.destroy();
        resolve(answer.slice(0, answer.indexOf("\r\n")));
      }
    });
    socket.on("error", reject);
  });
}
