import { mkdirSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { demoTools } from "../demo/demo-tools.js";
import { Agent } from "../agent/agent.js";
import { acceptToken, isLoopbackHost, JsonlTranscriptStore, serveWebUi, type WebUiPage } from "../server/index.js";
import type { AgentTool, TranscriptStore } from "../types.js";
import { importPeer } from "./import-peer.js";
import type { Instrument } from "./console-telemetry.js";
import type { ModelChoice } from "./model-from-environment.js";

export interface ServeOptions {
  choice: ModelChoice;
  /** `--otel`: instruments each session's agent options (console-telemetry.ts). */
  instrument?: Instrument;
  port: number;
  host: string;
  /** The folder the file tools may read. */
  root: string;
  toolStepDelay: number;
  /** The agent's tools, a live array (MCP servers' lists change in it); default: the demo tools. */
  tools?: AgentTool[];
  output: NodeJS.WritableStream;
  /** Clients must present it (`?token=`, `#token=` on the page, or `Authorization: Bearer`). */
  token?: string;
  /** Origins besides the page's own whose pages may connect. */
  allowOrigins?: string[];
  /** Serve beyond loopback without a token anyway. */
  insecure?: boolean;
  /** Keep each session's transcript in `<storeDirectory>/<session>.jsonl`, reopened after a restart. */
  storeDirectory?: string;
  /** Share the sessions with other `rxagent serve --redis` processes through this Redis (`redis://host:port`). */
  redis?: string;
  /** With `redis`: the lease of a run, in milliseconds (see `RedisSessionsOptions.leaseMs`). */
  leaseMs?: number;
  /** `--ai-sdk`: also serve the AI SDK's useChat at `/api/chat` (rxagent/ai-sdk), one agent per chat id. */
  aiSdk?: boolean;
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
  if (options.storeDirectory !== undefined) mkdirSync(options.storeDirectory, { recursive: true });
  const instrument: Instrument = options.instrument ?? ((agentOptions) => agentOptions);
  // Made once, shared by every session's agent as `options.tools` is: what they set up (the
  // clock's Intl formats, a synchronous stall at load) is paid at start, not inside a session's
  // first run, where a `--redis` process may hold a short lease.
  const tools = options.tools ?? demoTools({ root: options.root, stepDelay: options.toolStepDelay });
  /** A session's (or a useChat chat's) agent options; with `--otel`, its spans carry the id as `gen_ai.conversation.id`. */
  const agentOptions = (conversationId: string) =>
    instrument(
      {
        model: options.choice.model,
        tools,
        systemPrompt: `You are a helpful assistant in a browser, run by rxagent. Tools: calculator, clock, list_files and read_file (inside ${options.root}). Call independent tools in the same reply. Be concise.`,
      },
      conversationId,
    );
  /** A session's agent; with `--store`, on its transcript file (ids are [A-Za-z0-9_.:-]{1,128}, PROTOCOL.md: with ".jsonl" after it, a file name of the folder). */
  const openAgent = (name: string, conversationId: string): Agent | Promise<Agent> =>
    options.storeDirectory === undefined
      ? new Agent(agentOptions(conversationId))
      : Agent.open({ ...agentOptions(conversationId), store: new JsonlTranscriptStore(join(options.storeDirectory, `${name}.jsonl`)) });
  // A chat's file is `chat-<id>.jsonl`, apart from the WebSocket sessions' `<id>.jsonl`.
  const chats = options.aiSdk ? await chatEndpoint(options, (chatId) => openAgent(`chat-${chatId}`, chatId)) : undefined;
  const redis = options.redis === undefined ? undefined : await redisSessionsAt(options.redis, options.leaseMs, (sessionId, store) => Agent.open({ ...agentOptions(sessionId), store }));
  const server = await serveWebUi({
    port: options.port,
    host: options.host,
    ...(options.token === undefined ? {} : { auth: acceptToken(options.token) }),
    ...(options.allowOrigins === undefined ? {} : { allowedOrigins: options.allowOrigins }),
    createAgent: (session) => openAgent(session, session),
    page: firstScreen(options.choice),
    ...(chats ? { handleRequest: chats.handleRequest } : {}),
    ...redis?.serveOptions,
  }).catch(async (error: unknown) => {
    await redis?.close();
    await chats?.close();
    throw error;
  });
  // The token travels in the fragment: browsers never send it to a server in a request line or a log.
  const pageUrl = options.token === undefined ? server.url : `${server.url}#token=${encodeURIComponent(options.token)}`;
  const warning = options.token === undefined && !isLoopbackHost(options.host) ? "WARNING: no token; anyone who reaches this address can drive the agent.\n" : "";
  const shared = options.redis === undefined ? "" : `Sessions shared through Redis at ${options.redis}.\n`;
  const useChat = chats ? `useChat endpoint (AI SDK): ${server.url}api/chat\n` : "";
  options.output.write(`rxagent · ${options.choice.description}\n${warning}${shared}${useChat}Serving the web UI at ${pageUrl}  (Ctrl-C stops)\n`);
  return async () => {
    await chats?.close();
    await server.close();
    await redis?.close();
  };
}

/**
 * What the page's first screen says: the model, and prompts the demo tools answer (each also
 * works with a real model, which gets the same tools): tools at once, steering while one works,
 * and a tool that waits for the user's approval.
 */
function firstScreen(choice: ModelChoice): WebUiPage {
  return {
    model: choice.isDemo ? "the offline demo model" : choice.description.replace(/\.$/, ""),
    demo: choice.isDemo,
    examples: [
      { label: "Two tools at once", prompt: "what is 12*7 and what time is it" },
      { label: "Steer it while it works", prompt: "what is (1+2)*(3+4)", steer: "also what is 5*5" },
      { label: "Ask before writing", prompt: 'write "hello from rxagent" to notes.txt' },
      { label: "A sub-agent researches", prompt: "research what README.md says" },
    ],
  };
}

/** `--redis`: sessions on Redis, so several processes serve them; needs the optional peer ioredis. */
async function redisSessionsAt(url: string, leaseMs: number | undefined, openAgent: (sessionId: string, store: TranscriptStore) => Promise<Agent>) {
  const { redisSessions } = await importPeer(() => import("../redis/index.js"), "ioredis", "rxagent serve --redis");
  const sessions = redisSessions({ redis: url, ...(leaseMs === undefined ? {} : { leaseMs }), createAgent: (sessionId, store) => openAgent(sessionId, store) });
  try {
    await sessions.ready();
  } catch (error) {
    await sessions.close();
    throw error;
  }
  return sessions;
}

/**
 * `--ai-sdk`: the useChat endpoint of rxagent/ai-sdk at `/api/chat`, beside the WebSocket. Its
 * chats are this process's own (not shared through `--redis`); with a token, requests must carry
 * it as `Authorization: Bearer` or `?token=`.
 */
async function chatEndpoint(options: ServeOptions, openAgent: (chatId: string) => Agent | Promise<Agent>) {
  const { createChatHandler, handleNodeRequest } = await import("../ai-sdk/index.js");
  const accept = options.token === undefined ? undefined : acceptToken(options.token);
  const chats = createChatHandler({
    path: "/api/chat",
    createAgent: (chatId) => openAgent(chatId),
    ...(accept ? { auth: (request: Request) => accept(bearerOf(request)) } : {}),
  });
  return {
    handleRequest: (request: IncomingMessage, response: ServerResponse) => handleNodeRequest(chats, request, response),
    close: () => chats.close(),
  };
}

function bearerOf(request: Request): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(request.headers.get("authorization") ?? "");
  return match?.[1]?.trim() ?? new URL(request.url).searchParams.get("token") ?? undefined;
}
