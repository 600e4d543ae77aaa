import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";

const CHROMIUM = "/usr/bin/chromium";
const WEB = new URL("../../examples/web/", import.meta.url);

/** The page's client modules, served as the web UI serves them (client.js imports `/message-delta.js`, which imports `./partial-json.js`). */
const files: Record<string, string> = {
  "/client.js": readFileSync(new URL("client.js", WEB), "utf8"),
  "/message-delta.js": readFileSync(new URL("message-delta.js", WEB), "utf8"),
  "/partial-json.js": readFileSync(new URL("partial-json.js", WEB), "utf8"),
  "/": "<!doctype html><title>client test</title>",
};

/**
 * A server that plays the protocol by hand: it acks the attach with an empty snapshot, then
 * answers each command `session_moved` the first `movesPerCommand` times it arrives, `ack` after.
 * `received` counts how many times each command (by type and id) arrived.
 */
function movingServer(movesPerCommand: number): { server: Server; received: Map<string, number>; close: () => Promise<void> } {
  const server = createServer((request, response) => {
    const body = files[request.url ?? ""];
    if (body === undefined) return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": request.url === "/" ? "text/html" : "text/javascript" }).end(body);
  });
  const sockets = new WebSocketServer({ server });
  const received = new Map<string, number>();
  sockets.on("connection", (socket) => {
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { type: string; id: string };
      if (frame.type === "attach") {
        socket.send(JSON.stringify({ type: "ack", id: frame.id, session: "s", epoch: "e", protocol: 2, resume: "snapshot" }));
        socket.send(JSON.stringify({ type: "snapshot", session: "s", seq: 0, epoch: "e", state: { messages: [], isStreaming: false, pendingToolCalls: [], waitingToolCalls: [], pendingApprovals: [] } }));
        return;
      }
      const key = `${frame.type} ${frame.id}`;
      const count = (received.get(key) ?? 0) + 1;
      received.set(key, count);
      const moved = { type: "error", id: frame.id, code: "session_moved", message: `The session moved to another process before Redis stored this ${frame.type}, so it was not taken and no process will act on it; send it again.` };
      socket.send(JSON.stringify(count <= movesPerCommand ? moved : { type: "ack", id: frame.id }));
    });
  });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const client of sockets.clients) client.terminate();
      sockets.close();
      server.close(() => resolve());
    });
  return { server, received, close };
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Opens the page, connects the page's client, sends one command, and returns how it settled. */
async function sendFromPage(browser: Browser, host: string, command: "prompt" | "steer" | "approve"): Promise<string> {
  const page = await browser.newPage();
  try {
    await page.goto(`http://${host}/`);
    // A string, not a function: vitest rewrites `import()` in the test's own functions.
    const send = command === "prompt" ? `connection.prompt("deploy")` : command === "steer" ? `connection.steer("stop")` : `connection.approve("call-1")`;
    return await page.evaluate(`(async () => {
      const { AgentConnection } = await import("/client.js");
      const connection = new AgentConnection("ws://${host}/");
      while (connection.status !== "open") await new Promise((resolve) => setTimeout(resolve, 10));
      const settled = await ${send}.then(() => "resolved", (error) => "rejected: " + error.message);
      connection.close();
      return settled;
    })()`);
  } finally {
    await page.close();
  }
}

describe.skipIf(!existsSync(CHROMIUM))("the web page's client and a command answered session_moved (headless Chromium)", () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("sends the command again and resolves on the ack that follows (moved twice, then taken)", async () => {
    const { server, received, close } = movingServer(2);
    try {
      const host = await listening(server);
      expect(await sendFromPage(browser, host, "prompt")).toBe("resolved");
      expect([...received.values()]).toStrictEqual([3]);
      expect(await sendFromPage(browser, host, "steer")).toBe("resolved");
      expect([...received.values()]).toStrictEqual([3, 3]);
    } finally {
      await close();
    }
  }, 60_000);

  it("gives up after the fourth session_moved (sent 4 times in all) and rejects with the server's message", async () => {
    const { server, received, close } = movingServer(10);
    try {
      const host = await listening(server);
      const settled = await sendFromPage(browser, host, "approve");
      expect(settled).toBe("rejected: The session moved to another process before Redis stored this approve, so it was not taken and no process will act on it; send it again.");
      expect([...received.values()]).toStrictEqual([4]);
    } finally {
      await close();
    }
  }, 60_000);
});
