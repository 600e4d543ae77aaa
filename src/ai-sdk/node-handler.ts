import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { errorText } from "../errors.js";
import type { ChatHandler } from "./chat-handler.js";

/**
 * The chat handler for Node's HTTP server: answers the requests under `handler.path` and returns
 * true, or returns false for the others so the server can answer them itself. It never throws: a
 * request the Fetch API cannot carry (a method such as `TRACE`, a `Host` that is not a host) is
 * answered here, 405 or 400.
 *
 * Contract: a client that disconnects cancels the response stream, which aborts its run (unless
 * `abortOnDisconnect: false`).
 * @example createServer((request, response) => { if (!handleNodeRequest(chat, request, response)) response.writeHead(404).end(); });
 */
export function handleNodeRequest(handler: ChatHandler, request: IncomingMessage, response: ServerResponse): boolean {
  // The path alone decides whose request it is; the Host header may not parse.
  const path = pathOf(request.url);
  if (path === undefined || !handler.handles(path)) return false;
  const fetchRequest = fetchRequestOf(request, response);
  if ("status" in fetchRequest) {
    response.writeHead(fetchRequest.status, { "content-type": "text/plain; charset=utf-8", ...fetchRequest.headers }).end(fetchRequest.message);
    return true;
  }
  handler
    .fetch(fetchRequest)
    .then(async (answer) => {
      const headers: Record<string, string> = {};
      answer.headers.forEach((value, name) => (headers[name] = value));
      response.writeHead(answer.status, headers);
      if (!answer.body) return void response.end();
      // pipeline destroys the body's reader when the response closes early: the stream is cancelled.
      await pipeline(Readable.fromWeb(answer.body as import("node:stream/web").ReadableStream<Uint8Array>), response);
    })
    .catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  return true;
}

/** The request's path, read against a fixed origin; `undefined` when it is no URL at all. */
function pathOf(url: string | undefined): string | undefined {
  try {
    return new URL(url ?? "/", "http://localhost").pathname;
  } catch {
    return undefined;
  }
}

/** The methods the Fetch API's `Request` refuses to carry. */
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

/**
 * The request as the Fetch API's `Request`, or the answer to give when it cannot be one. Why:
 * `new Request` throws for the methods the Fetch API forbids (`CONNECT`, `TRACE`, `TRACK`) and
 * `new URL` for a `Host` header that is not a host, and a throw here came out of Node's HTTP
 * parser as an uncaught exception: one request ended the process.
 */
function fetchRequestOf(request: IncomingMessage, response: ServerResponse): Request | { status: number; message: string; headers?: Record<string, string> } {
  let url: URL;
  try {
    url = new URL(request.url ?? "/", `http://${request.headers.host ?? "localhost"}`);
  } catch {
    return { status: 400, message: "The Host header is not a host." };
  }
  const method = request.method ?? "GET";
  if (FORBIDDEN_METHODS.has(method.toUpperCase())) return { status: 405, message: `${method} is not supported here.`, headers: { allow: "GET, POST" } };
  const left = new AbortController();
  const hasBody = method !== "GET" && method !== "HEAD";
  let fetchRequest: Request;
  try {
    fetchRequest = new Request(url, {
      method,
      headers: headersOf(request),
      signal: left.signal,
      ...(hasBody ? { body: Readable.toWeb(request) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
    });
  } catch (error) {
    return { status: 400, message: `The request cannot be read: ${errorText(error)}` };
  }
  response.once("close", () => {
    if (!response.writableFinished) left.abort();
  });
  return fetchRequest;
}

function headersOf(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}
