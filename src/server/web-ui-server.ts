import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type AgentServer, serveAgents, type ServeAgentsOptions } from "./server.js";
import { pageOrigins } from "./verify-upgrade.js";
import { errorText } from "../errors.js";
import { warnerOf } from "../util/detached-callback.js";

/** What the page's first screen says before anything was sent: it reads this from `/page.json`. */
export interface WebUiPage {
  /** Which model answers, as the user should read it, e.g. `"gpt-4o-mini via the OpenAI Chat Completions API"`. */
  model?: string;
  /** The model is the offline demo: the page says so, so no one takes its replies for a real model's. */
  demo?: boolean;
  /**
   * Example prompts offered as buttons on the empty page. `steer` is typed as steering once the
   * run is busy with a tool, to show what steering does.
   * @example [{ label: "Two tools at once", prompt: "what is 12*7 and what time is it" }]
   */
  examples?: { label: string; prompt: string; steer?: string }[];
}

export interface ServeWebUiOptions extends Omit<ServeAgentsOptions, "server" | "port" | "host" | "path"> {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default `"127.0.0.1"`: the page drives an agent with tools, so it stays local unless asked. */
  host?: string;
  /** Shown on the page's first screen (the model, example prompts); default: nothing. */
  page?: WebUiPage;
  /**
   * More HTTP routes on the page's port, asked first: return true when it answered the request.
   * Contract: it checks its own requests (auth, origin); the WebSocket's checks do not cover it.
   * One that throws is reported to `onWarning` and its request answered 500: a request must not
   * end the process from inside Node's HTTP parser.
   * @example handleRequest: (request, response) => handleNodeRequest(chatHandler, request, response) // rxagent/ai-sdk's useChat endpoint
   */
  handleRequest?: (request: IncomingMessage, response: ServerResponse) => boolean;
}

export interface WebUiServer {
  /** The page, e.g. `http://127.0.0.1:8787/`; its WebSocket endpoint is `/ws` beside it. */
  url: string;
  agents: AgentServer;
  close(): Promise<void>;
}

/** The page's files, relative to this module so it works from `src/` (tsx) and `dist/` alike. */
const WEB_ROOT = new URL("../../examples/web/", import.meta.url);
const FILES: Record<string, string> = {
  "/": "index.html",
  "/index.html": "index.html",
  "/app.js": "app.js",
  "/client.js": "client.js",
  "/message-delta.js": "message-delta.js",
  "/partial-json.js": "partial-json.js",
  "/style.css": "style.css",
};
const CONTENT_TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json; charset=utf-8",
};

/**
 * Serves the browser UI of `examples/web/` and the agent WebSocket endpoint (`/ws`) on one
 * port. `rxagent serve` calls this with its Agent factory.
 *
 * Only the page's own origin (on loopback: localhost, 127.0.0.1 and [::1] alike) and
 * `allowedOrigins` may open the WebSocket: any other site the user visits could otherwise drive
 * a local agent (and its tools) through the browser.
 *
 * @example
 * const ui = await serveWebUi({ port: 8787, createAgent: () => new Agent({ model }) });
 * console.log(`Open ${ui.url}`);
 */
export async function serveWebUi(options: ServeWebUiOptions): Promise<WebUiServer> {
  const host = options.host ?? "127.0.0.1";
  const warn = warnerOf(options.onWarning);
  const http = createServer((request, response) => {
    try {
      if (options.handleRequest?.(request, response)) return;
    } catch (error) {
      warn(`handleRequest failed: ${errorText(error)}`);
      return failedRequest(response);
    }
    serveFile(request, response, options.page ?? {}).catch(() => failedRequest(response));
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const origin = `http://${urlHost}:${port}`;
  const allowedOrigins = options.allowedOrigins === "*" ? "*" : [...pageOrigins(host, port), ...(options.allowedOrigins ?? [])];
  const agents = await serveAgents({ ...options, server: http, path: "/ws", allowedOrigins });
  return {
    url: `${origin}/`,
    agents,
    async close() {
      await agents.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function serveFile(request: IncomingMessage, response: ServerResponse, page: WebUiPage): Promise<void> {
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  const name = path === "/page.json" ? "page.json" : FILES[path];
  if (request.method !== "GET" || name === undefined) {
    response.writeHead(404, { "content-type": "text/plain" }).end("Not found");
    return;
  }
  const body = name === "page.json" ? JSON.stringify(page) : await readFile(new URL(name, WEB_ROOT));
  response.writeHead(200, {
    "content-type": CONTENT_TYPES[name.split(".").pop() ?? ""] ?? "application/octet-stream",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:",
    "cache-control": "no-store",
  });
  response.end(body);
}

/** Ends a request that failed on the server's side with 500, or as it stands once its head went out. */
function failedRequest(response: ServerResponse): void {
  if (!response.headersSent) response.writeHead(500);
  response.end();
}
