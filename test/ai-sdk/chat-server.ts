import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Type } from "@sinclair/typebox";
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { type ChatHandler, createChatHandler, type ChatHandlerOptions, handleNodeRequest } from "../../src/ai-sdk/index.js";
import { defineTool } from "../../src/tools/define-tool.js";

/** A tool that waits for approval: what the approval tests answer. */
export const deleteFile = defineTool({
  name: "delete_file",
  description: "Deletes a file",
  parameters: Type.Object({ path: Type.String() }),
  needsApproval: true,
  execute: async (_id, { path }) => ({ content: [{ type: "text", text: `deleted ${path}` }], details: {} }),
});

/** The chat handler on a real Node HTTP server (127.0.0.1, a free port); other paths get the server's own 404. */
export async function startChatServer(options: ChatHandlerOptions): Promise<{ url: string; handler: ChatHandler; server: Server; close(): Promise<void> }> {
  const handler = createChatHandler(options);
  const server = createServer((request, response) => {
    if (!handleNodeRequest(handler, request, response)) response.writeHead(404, { "content-type": "text/plain" }).end("The server's own 404");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    handler,
    server,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** useChat's POST body for one new user message. */
export function chatBody(chatId: string, text: string): string {
  return JSON.stringify({ id: chatId, messages: [{ id: `user-${text.length}`, role: "user", parts: [{ type: "text", text }] }], trigger: "submit-message" });
}

export function postJson(url: string, body: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, ...init });
}

/** A server-sent-event body's chunks, as useChat's transport parses them, until `[DONE]`. */
export async function chunksOf(response: Response): Promise<UIMessageChunk[]> {
  const text = await response.text();
  const events = text.split("\n\n").filter((event) => event.startsWith("data: "));
  expectDone(events[events.length - 1]);
  return events.slice(0, -1).map((event) => JSON.parse(event.slice("data: ".length)) as UIMessageChunk);
}

function expectDone(last: string | undefined): void {
  if (last !== "data: [DONE]") throw new Error(`The stream did not end with [DONE] but with ${last}`);
}

/** The final UIMessage of `chunks`, read by ai's own reader. */
export async function finalMessage(chunks: UIMessageChunk[]): Promise<UIMessage> {
  let last: UIMessage | undefined;
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  for await (const message of readUIMessageStream({ stream })) last = message;
  return JSON.parse(JSON.stringify(last)) as UIMessage;
}
