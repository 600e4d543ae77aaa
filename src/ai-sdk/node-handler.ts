import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ChatHandler } from "./chat-handler.js";

/**
 * The chat handler for Node's HTTP server: answers the requests under `handler.path` and returns
 * true, or returns false for the others so the server can answer them itself.
 *
 * Contract: a client that disconnects cancels the response stream, which aborts its run (unless
 * `abortOnDisconnect: false`).
 * @example createServer((request, response) => { if (!handleNodeRequest(chat, request, response)) response.writeHead(404).end(); });
 */
export function handleNodeRequest(handler: ChatHandler, request: IncomingMessage, response: ServerResponse): boolean {
  const url = new URL(request.url ?? "/", `http://${request.headers.host ?? "localhost"}`);
  if (!handler.handles(url.pathname)) return false;
  const left = new AbortController();
  response.once("close", () => {
    if (!response.writableFinished) left.abort();
  });
  const hasBody = request.method !== "GET" && request.method !== "HEAD";
  const fetchRequest = new Request(url, {
    method: request.method ?? "GET",
    headers: headersOf(request),
    signal: left.signal,
    ...(hasBody ? { body: Readable.toWeb(request) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  });
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

function headersOf(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}
