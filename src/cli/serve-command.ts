import { demoTools } from "../demo/demo-tools.js";
import { Agent } from "../streams/agent.js";
import { serveWebUi } from "../server/index.js";
import type { AgentTool } from "../types.js";
import type { ModelChoice } from "./model-from-environment.js";

export interface ServeOptions {
  choice: ModelChoice;
  port: number;
  host: string;
  /** The folder the file tools may read. */
  root: string;
  toolStepDelay: number;
  /** The agent's tools, a live array (MCP servers' lists change in it); default: the demo tools. */
  tools?: AgentTool[];
  output: NodeJS.WritableStream;
}

/**
 * `rxagent serve`: the browser UI over a WebSocket, one agent per session, same model choice
 * and tools as the chat.
 *
 * Contract: resolves with a function that closes the server.
 */
export async function runServe(options: ServeOptions): Promise<() => Promise<void>> {
  const server = await serveWebUi({
    port: options.port,
    host: options.host,
    createAgent: () =>
      new Agent({
        model: options.choice.model,
        tools: options.tools ?? demoTools({ root: options.root, stepDelay: options.toolStepDelay }),
        systemPrompt: `You are a helpful assistant in a browser, run by rxagent. Tools: calculator, clock, list_files and read_file (inside ${options.root}). Call independent tools in the same reply. Be concise.`,
      }),
  });
  options.output.write(`rxagent · ${options.choice.description}\nServing the web UI at ${server.url}  (Ctrl-C stops)\n`);
  return () => server.close();
}
