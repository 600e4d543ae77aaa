import { filter, firstValueFrom } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { connectAgent } from "../../src/client/index.js";
import { splitCommandLine } from "../../src/cli/mcp-servers.js";
import { startReplayServer, type ReplayServer } from "../helpers/sse-replay-server.js";
import { binOf, connectEverythingHttp } from "../mcp/servers.js";
import { demoEnvironment, startCli } from "./cli-process.js";

const everythingBin = binOf("@modelcontextprotocol/server-everything", "mcp-server-everything");
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

/** An OpenAI-compatible server that records the first request and refuses it, so the chat ends at once. */
async function recordingModelServer(): Promise<ReplayServer> {
  const server = await startReplayServer([{ kind: "http-error", status: 400, body: { error: { message: "recorded; stopping here" } } }]);
  open.push(server);
  return server;
}

function toolNamesSent(server: ReplayServer): string[] {
  const body = server.requests[0]!.body as { tools: { function: { name: string } }[] };
  return body.tools.map((tool) => tool.function.name);
}

describe("rxagent chat --mcp / --mcp-url (real processes)", () => {
  it("--mcp starts a stdio server and adds its tools to the demo tools the model is sent", async () => {
    const server = await recordingModelServer();
    const cli = startCli(["chat", "--json", "--mcp", `"${process.execPath}" ${everythingBin} stdio`], {
      environment: demoEnvironment({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" }),
    });
    cli.child.stdin.end("hello\n");
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toMatch(/^MCP server ".+ stdio": 13 tools \(echo, get-annotated-message, /m);
    const names = toolNamesSent(server);
    expect(names.slice(0, 4)).toStrictEqual(["calculator", "clock", "list_files", "read_file"]);
    expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "trigger-long-running-operation"]));
  }, 60_000);

  it("--mcp-url connects to a Streamable HTTP server", async () => {
    const server = await recordingModelServer();
    const everything = await connectEverythingHttp();
    open.push(everything);
    const cli = startCli(["chat", "--json", "--mcp-url", everything.url!], { environment: demoEnvironment({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" }) });
    cli.child.stdin.end("hello\n");
    expect(await cli.exited).toBe(0);
    expect(toolNamesSent(server)).toEqual(expect.arrayContaining(["calculator", "echo", "get-sum"]));
  }, 60_000);

  it("serve --mcp gives each session's agent the server's tools, and exits 0 on SIGINT", async () => {
    const server = await recordingModelServer();
    const cli = startCli(["serve", "--port", "0", "--mcp", `"${process.execPath}" ${everythingBin} stdio`], {
      environment: demoEnvironment({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" }),
    });
    // Stopped even when the test fails: SIGINT also closes its MCP server.
    open.push({ close: async () => void (cli.child.exitCode === null && cli.child.kill("SIGINT")) });
    await cli.waitFor((stdout) => /Serving the web UI at http:\/\/127\.0\.0\.1:\d+\//.test(stdout), 60_000);
    expect(cli.stderr()).toMatch(/^MCP server ".+ stdio": 13 tools \(echo, /m);
    const page = /Serving the web UI at http:\/\/(127\.0\.0\.1:\d+)\//.exec(cli.stdout())![1]!;
    const client = connectAgent(`ws://${page}/ws`, { WebSocket });
    const ended = firstValueFrom(client.events$.pipe(filter((event) => event.type === "agent_end")));
    await client.prompt("hello");
    await ended;
    client.close();
    expect(toolNamesSent(server)).toEqual(expect.arrayContaining(["calculator", "echo", "get-sum"]));
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(0);
  }, 90_000);

  it("fails with a message naming a server that cannot start", async () => {
    const cli = startCli(["chat", "--mcp", "rxagent-no-such-command --flag"]);
    cli.child.stdin.end();
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toMatch(/^rxagent: MCP server "rxagent-no-such-command --flag" could not be reached: spawn rxagent-no-such-command ENOENT\n$/);
  }, 60_000);
});

describe("splitCommandLine", () => {
  it("splits on spaces, groups quotes and honours backslashes", () => {
    expect(splitCommandLine(`node "my server.js" --root '/tmp/a b' a\\ b ""`)).toStrictEqual(["node", "my server.js", "--root", "/tmp/a b", "a b", ""]);
    expect(splitCommandLine("  npx   -y pkg  ")).toStrictEqual(["npx", "-y", "pkg"]);
    expect(() => splitCommandLine(`node "open`)).toThrow('--mcp "node "open": a quote is not closed');
  });
});
