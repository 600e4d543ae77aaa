import type { UIMessageChunk } from "ai";
import type { Observable, Subscription } from "rxjs";
import type { AgentEvent } from "../index.js";
import { type RxagentDataParts, toUIMessageChunks, type UIMessageChunkOptions } from "./ui-message-chunks.js";

/** The headers of a UI message stream response, as `ai`'s `UI_MESSAGE_STREAM_HEADERS`. */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};

/**
 * A run's events as the AI SDK's UI message stream: a `ReadableStream` of chunks, what
 * `readUIMessageStream` and `createUIMessageStreamResponse` of `ai` take.
 *
 * Contract: cancelling the stream unsubscribes from `events$` (an `Agent`'s run goes on: call
 * `agent.abort()` to stop it, as the chat handler does when its client leaves).
 * @example const message = readUIMessageStream({ stream: toUIMessageStream(agent.prompt("hi")) });
 */
export function toUIMessageStream(events$: Observable<AgentEvent>, options: UIMessageChunkOptions = {}): ReadableStream<UIMessageChunk<unknown, RxagentDataParts>> {
  let subscription: Subscription | undefined;
  return new ReadableStream({
    start(controller) {
      subscription = events$.pipe(toUIMessageChunks(options)).subscribe({
        next: (chunk) => controller.enqueue(chunk),
        error: (error: unknown) => controller.error(error),
        complete: () => controller.close(),
      });
    },
    cancel() {
      subscription?.unsubscribe();
    },
  });
}

/**
 * Chunks as server-sent events (`data: {json}` each, then `data: [DONE]`), the body useChat's
 * `DefaultChatTransport` reads.
 */
export function toServerSentEvents(chunks: ReadableStream<UIMessageChunk<unknown, RxagentDataParts>>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return chunks.pipeThrough(
    new TransformStream<UIMessageChunk<unknown, RxagentDataParts>, Uint8Array>({
      transform: (chunk, controller) => controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`)),
      flush: (controller) => controller.enqueue(encoder.encode("data: [DONE]\n\n")),
    }),
  );
}
