import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { AgentTool } from "../types.js";

export interface McpServerOptions {
  /** `--mcp` values: command lines of stdio servers. */
  commandLines: string[];
  /** `--mcp-url` values: Streamable HTTP endpoints. */
  urls: string[];
  /** The agent's other tools; the servers' tools are added to this array and kept up to date in it. */
  tools: AgentTool[];
  /** Where a line per server says what it brought. */
  output: NodeJS.WritableStream;
}

export interface McpServers {
  /** The live array: the given tools plus every server's. */
  tools: AgentTool[];
  /** Disconnects every server (stdio servers are stopped). */
  close(): Promise<void>;
}

/**
 * Connects the servers given with `--mcp` and `--mcp-url` and adds their tools to the agent's.
 *
 * The SDK is loaded only here, so the CLI runs without it unless these flags are used; a
 * missing SDK, a command that does not start or a URL that does not answer fails with a message
 * naming the server.
 */
export async function connectMcpServers(options: McpServerOptions): Promise<McpServers> {
  const sdk = await loadSdk();
  const clients: Client[] = [];
  const close = async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
  };
  const servers = [
    ...options.commandLines.map((commandLine) => ({ label: commandLine, transport: () => stdioTransport(sdk, commandLine) })),
    ...options.urls.map((url) => ({ label: url, transport: () => new sdk.StreamableHTTPClientTransport(new URL(url)) })),
  ];
  try {
    for (const server of servers) {
      const client = new sdk.Client({ name: "rxagent", version: "0.1.0" });
      try {
        await client.connect(server.transport());
      } catch (error) {
        throw new Error(`MCP server "${server.label}" could not be reached: ${(error as Error).message}`);
      }
      clients.push(client);
      const before = options.tools.length;
      await sdk.mcpTools(client, { into: options.tools });
      const names = options.tools.slice(before).map((tool) => tool.name);
      options.output.write(`MCP server "${server.label}": ${names.length} tools (${names.join(", ")})\n`);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { tools: options.tools, close };
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;

async function loadSdk() {
  try {
    const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }, { mcpTools }] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/stdio.js"),
      import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
      import("../mcp/index.js"),
    ]);
    return { Client, StdioClientTransport, StreamableHTTPClientTransport, mcpTools };
  } catch (error) {
    throw new Error(`--mcp needs the MCP SDK: npm install @modelcontextprotocol/sdk (${(error as Error).message})`);
  }
}

function stdioTransport(sdk: Sdk, commandLine: string) {
  const [command, ...args] = splitCommandLine(commandLine);
  if (command === undefined) throw new Error("--mcp needs a command line, e.g. --mcp \"npx -y @modelcontextprotocol/server-everything\"");
  // The server's own log would mix into the chat's screen.
  return new sdk.StdioClientTransport({ command, args, stderr: "ignore" });
}

/**
 * Splits a command line into words as a shell would for simple cases: spaces separate, single
 * and double quotes group, a backslash escapes the next character (outside single quotes).
 * @example splitCommandLine(`node "my server.js" --root '/tmp/a b'`) // ["node", "my server.js", "--root", "/tmp/a b"]
 */
export function splitCommandLine(commandLine: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let index = 0; index < commandLine.length; index++) {
    const character = commandLine[index]!;
    if (quote === "'") {
      if (character === "'") quote = undefined;
      else word += character;
    } else if (character === "\\" && index + 1 < commandLine.length) {
      word += commandLine[++index];
      inWord = true;
    } else if (quote === '"') {
      if (character === '"') quote = undefined;
      else word += character;
    } else if (character === "'" || character === '"') {
      quote = character;
      inWord = true;
    } else if (/\s/.test(character)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += character;
      inWord = true;
    }
  }
  if (quote !== undefined) throw new Error(`--mcp "${commandLine}": a quote is not closed`);
  if (inWord) words.push(word);
  return words;
}
