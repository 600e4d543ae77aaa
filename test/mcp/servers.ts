/** Real MCP servers from npm for the tests, started and closed by each test file. */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const require = createRequire(import.meta.url);

/** The bin script of an npm package, run with this Node. */
export function binOf(packageName: string, bin: string): string {
  const packageJson = require.resolve(`${packageName}/package.json`);
  const bins = (require(packageJson) as { bin: Record<string, string> }).bin;
  return path.join(path.dirname(packageJson), bins[bin]!);
}

export interface Connection {
  client: Client;
  /** Every message the client sent, in order. */
  sent: JSONRPCMessage[];
  /** The server's process. */
  process: ChildProcess | undefined;
  /** The server's endpoint, for HTTP servers. */
  url?: string;
  close(): Promise<void>;
}

/** Records what the client sends, without changing it. */
function recording(transport: Transport, sent: JSONRPCMessage[]): Transport {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  return transport;
}

export async function connectStdio(command: string, args: string[]): Promise<Connection> {
  const client = new Client({ name: "rxagent-test", version: "1.0.0" });
  const sent: JSONRPCMessage[] = [];
  const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  await client.connect(recording(transport, sent));
  const pid = transport.pid;
  return {
    client,
    sent,
    process: pid === null ? undefined : ({ pid, kill: (signal?: NodeJS.Signals) => process.kill(pid, signal) } as ChildProcess),
    close: () => client.close(),
  };
}

/** server-everything's Streamable HTTP mode (`mcp-server-everything streamableHttp`, port from PORT). */
export async function connectEverythingHttp(): Promise<Connection> {
  const port = await freePort();
  const child = spawn(process.execPath, [binOf("@modelcontextprotocol/server-everything", "mcp-server-everything"), "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes("listening on port")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server-everything exited with ${code}: ${stderr}`)));
  });
  const client = new Client({ name: "rxagent-test", version: "1.0.0" });
  const sent: JSONRPCMessage[] = [];
  const url = `http://127.0.0.1:${port}/mcp`;
  await client.connect(recording(new StreamableHTTPClientTransport(new URL(url)), sent));
  return {
    client,
    sent,
    process: child,
    url,
    close: async () => {
      await client.close();
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill();
      await exited;
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
