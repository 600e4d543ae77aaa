import { demoTools } from "../demo/demo-tools.js";
import { Agent } from "../streams/agent.js";
import { acceptToken, isLoopbackHost, serveWebUi } from "../server/index.js";
import type { ModelChoice } from "./model-from-environment.js";

export interface ServeOptions {
  choice: ModelChoice;
  port: number;
  host: string;
  /** The folder the file tools may read. */
  root: string;
  toolStepDelay: number;
  output: NodeJS.WritableStream;
  /** Clients must present it (`?token=`, `#token=` on the page, or `Authorization: Bearer`). */
  token?: string;
  /** Origins besides the page's own whose pages may connect. */
  allowOrigins?: string[];
  /** Serve beyond loopback without a token anyway. */
  insecure?: boolean;
}

/** Refuses to expose the agent (and its file tools) beyond this machine without a token. */
export function exposureProblem(options: Pick<ServeOptions, "host" | "token" | "insecure">): string | undefined {
  if (isLoopbackHost(options.host) || options.token !== undefined || options.insecure) return undefined;
  return `--host ${options.host} serves beyond this machine: anyone who reaches it could drive the agent and its file tools. Set --token (or RXAGENT_TOKEN), or pass --insecure if you mean it.`;
}

/**
 * `rxagent serve`: the browser UI over a WebSocket, one agent per session, same model choice
 * and tools as the chat.
 *
 * Contract: resolves with a function that closes the server.
 */
export async function runServe(options: ServeOptions): Promise<() => Promise<void>> {
  const problem = exposureProblem(options);
  if (problem) throw new Error(problem);
  const server = await serveWebUi({
    port: options.port,
    host: options.host,
    ...(options.token === undefined ? {} : { auth: acceptToken(options.token) }),
    ...(options.allowOrigins === undefined ? {} : { allowedOrigins: options.allowOrigins }),
    createAgent: () =>
      new Agent({
        model: options.choice.model,
        tools: demoTools({ root: options.root, stepDelay: options.toolStepDelay }),
        systemPrompt: `You are a helpful assistant in a browser, run by rxagent. Tools: calculator, clock, list_files and read_file (inside ${options.root}). Call independent tools in the same reply. Be concise.`,
      }),
  });
  // The token travels in the fragment: browsers never send it to a server in a request line or a log.
  const pageUrl = options.token === undefined ? server.url : `${server.url}#token=${encodeURIComponent(options.token)}`;
  const warning = options.token === undefined && !isLoopbackHost(options.host) ? "WARNING: no token; anyone who reaches this address can drive the agent.\n" : "";
  options.output.write(`rxagent · ${options.choice.description}\n${warning}Serving the web UI at ${pageUrl}  (Ctrl-C stops)\n`);
  return () => server.close();
}
