import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { RawClient, waitFor } from "../server/helpers.js";
import { demoEnvironment, startCli } from "./cli-process.js";

/** How an upgrade to `url` ends: "open", or the HTTP status that refused it. */
function upgrade(url: string): Promise<string | number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url);
    socket.on("open", () => (resolve("open"), socket.close()));
    socket.on("unexpected-response", (_request, response) => (resolve(response.statusCode ?? 0), socket.terminate()));
    socket.on("error", () => undefined);
  });
}

describe("rxagent serve", () => {
  it("serves the web UI on loopback, prints the URL, and stops on SIGINT", async () => {
    const cli = startCli(["serve", "--port", "0", "--delay", "0"]);
    await cli.waitFor((stdout) => /Serving the web UI at http:\/\/127\.0\.0\.1:\d+\//.test(stdout));
    expect(cli.stdout()).toMatch(/^rxagent · the offline demo model/);
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(cli.stdout())?.[1] ?? "";
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/html/);
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(0);
  });

  it("refuses to serve beyond loopback without a token, unless --insecure", async () => {
    const refused = startCli(["serve", "--port", "0", "--host", "0.0.0.0", "--delay", "0"]);
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toMatch(/--host 0\.0\.0\.0 serves beyond this machine.*--token \(or RXAGENT_TOKEN\).*--insecure/);

    const insecure = startCli(["serve", "--port", "0", "--host", "0.0.0.0", "--insecure", "--delay", "0"]);
    await insecure.waitFor((stdout) => /Serving the web UI at/.test(stdout));
    expect(insecure.stdout()).toMatch(/WARNING: no token/);
    insecure.child.kill("SIGINT");
    expect(await insecure.exited).toBe(0);
  });

  it("with RXAGENT_TOKEN, prints the page URL with the token in its fragment and refuses sockets without it", async () => {
    const cli = startCli(["serve", "--port", "0", "--delay", "0"], { environment: demoEnvironment({ RXAGENT_TOKEN: "s3cret token" }) });
    await cli.waitFor((stdout) => /Serving the web UI at/.test(stdout));
    const [, url = "", port = ""] = /(http:\/\/127\.0\.0\.1:(\d+)\/)#token=s3cret%20token/.exec(cli.stdout()) ?? [];
    expect((await fetch(url)).status).toBe(200);
    expect(await upgrade(`ws://127.0.0.1:${port}/ws`)).toBe(401);
    expect(await upgrade(`ws://127.0.0.1:${port}/ws?token=wrong`)).toBe(401);
    expect(await upgrade(`ws://127.0.0.1:${port}/ws?token=s3cret%20token`)).toBe("open");
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(0);
  });

  it("with --store, keeps each session's transcript in <dir>/<session>.jsonl and picks it up after a restart", async () => {
    const directory = join(mkdtempSync(join(tmpdir(), "rxagent-serve-store-")), "sessions");
    const serve = async () => {
      const cli = startCli(["serve", "--port", "0", "--delay", "0", "--store", directory]);
      await cli.waitFor((stdout) => /Serving the web UI at/.test(stdout));
      const port = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(cli.stdout())?.[1] ?? "";
      const client = await RawClient.open(`ws://127.0.0.1:${port}/ws`);
      await client.request({ type: "attach", session: "kept" });
      return { cli, client };
    };
    const first = await serve();
    await first.client.request({ type: "prompt", input: "what is 6*7" });
    await waitFor(() => first.client.hasEvent("agent_end"), "agent_end", 20_000);
    first.cli.child.kill("SIGKILL");
    await first.cli.exited;
    expect(readdirSync(directory)).toStrictEqual(["kept.jsonl"]);

    const second = await serve();
    const snapshot = await waitFor(() => second.client.frames.find((frame) => frame.type === "snapshot"), "the snapshot");
    expect(snapshot.state.messages.map((message) => (message as { role: string }).role).slice(0, 1)).toStrictEqual(["user"]);
    expect(snapshot.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
    await second.client.close();
    second.cli.child.kill("SIGINT");
    expect(await second.cli.exited).toBe(0);
  });
});
