import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A chat-completions request as pi's OpenAI-compatible provider sends it (the fields read here). */
export interface ChatRequest {
  model: string;
  messages: { role: string; content: unknown; tool_call_id?: string }[];
}

/** What the fake model answers one request with. */
export type Reply =
  | { text: string; gate?: Promise<void> }
  | { toolCall: { name: string; arguments: Record<string, unknown> }; gate?: Promise<void> }
  /** Sends the first words, then keeps the response open until the client goes (an abort). */
  | { hang: string };

export interface FakeOpenAI {
  /** The provider's `baseUrl` (`…/v1`). */
  baseUrl: string;
  requests: ChatRequest[];
  /** Resolves with the request once `count` requests have arrived. */
  requestArrived(count: number): Promise<ChatRequest>;
  close(): Promise<void>;
}

/**
 * A local OpenAI-compatible server (`POST /v1/chat/completions`, streamed): each request is
 * answered by `brain`, which reads the conversation so far (so the same script gives both
 * engines the same answers). Text arrives in three deltas, a tool call's arguments in two.
 * A `gate` holds the answer back until it resolves, so a test can act while the model "thinks".
 */
export async function startFakeOpenAI(brain: (request: ChatRequest, index: number) => Reply): Promise<FakeOpenAI> {
  const requests: ChatRequest[] = [];
  const waiting: { count: number; resolve: (request: ChatRequest) => void }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
      const index = requests.push(body) - 1;
      for (const waiter of waiting.filter((entry) => entry.count <= requests.length)) waiter.resolve(requests[waiter.count - 1]!);
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const reply = brain(body, index);
      if ("hang" in reply) {
        send(response, index, { role: "assistant", content: reply.hang });
        return;
      }
      void (reply.gate ?? Promise.resolve()).then(() => answer(response, index, reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    requestArrived: (count) =>
      new Promise((resolve) => {
        if (requests.length >= count) resolve(requests[count - 1]!);
        else waiting.push({ count, resolve });
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(response: ServerResponse, index: number, reply: Exclude<Reply, { hang: string }>): void {
  if ("text" in reply) {
    const words = reply.text.split(/(?<= )/);
    const thirds = [words.slice(0, 1), words.slice(1, 2), words.slice(2)].map((part) => part.join(""));
    send(response, index, { role: "assistant", content: thirds[0] });
    for (const part of thirds.slice(1)) if (part !== "") send(response, index, { content: part });
    finish(response, index, "stop");
    return;
  }
  const argumentsText = JSON.stringify(reply.toolCall.arguments);
  const half = Math.floor(argumentsText.length / 2);
  const id = `call_${index}`;
  send(response, index, { role: "assistant", tool_calls: [{ index: 0, id, type: "function", function: { name: reply.toolCall.name, arguments: argumentsText.slice(0, half) } }] });
  send(response, index, { tool_calls: [{ index: 0, function: { arguments: argumentsText.slice(half) } }] });
  finish(response, index, "tool_calls");
}

function send(response: ServerResponse, index: number, delta: Record<string, unknown>, finishReason: string | null = null): void {
  const chunk = { id: `chatcmpl-${index}`, object: "chat.completion.chunk", created: 0, model: "fake-model", choices: [{ index: 0, delta, finish_reason: finishReason }] };
  response.write(`data: ${JSON.stringify(chunk)}\n\n`);
}

function finish(response: ServerResponse, index: number, reason: string): void {
  const chunk = {
    id: `chatcmpl-${index}`,
    object: "chat.completion.chunk",
    created: 0,
    model: "fake-model",
    choices: [{ index: 0, delta: {}, finish_reason: reason }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
  response.write(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
  response.end();
}

/** The text of a chat message's content (a string or text parts). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? "").join("");
  return "";
}
