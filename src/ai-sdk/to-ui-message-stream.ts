import type { UIMessageChunk } from "ai";
import type { Observable, Subscription } from "rxjs";
import type { AgentEvent } from "../index.js";
import { type RxagentDataParts, toUIMessageChunks, type UIMessageChunkOptions } from "./ui-message-chunks.js";
import { repairedJson } from "../util/repaired-json.js";

/** The headers of a UI message stream response, as `ai`'s `UI_MESSAGE_STREAM_HEADERS`. */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};

/** Options of `toUIMessageStream`: those of the chunks, and the reader's allowance. */
export interface UIMessageStreamOptions extends UIMessageChunkOptions {
  /**
   * How many chunks may wait for a reader that does not keep up, the last of them an `error`
   * chunk that ends its stream (the run goes on; a client can resume from the run's record).
   * Default 10,000.
   */
  maxQueuedChunks?: number;
}

/** The error text of a stream ended because its reader fell behind. */
export const SLOW_READER_TEXT = "The stream ended: its reader fell more than the allowed number of chunks behind the run.";

/**
 * A run's events as the AI SDK's UI message stream: a `ReadableStream` of chunks, what
 * `readUIMessageStream` and `createUIMessageStreamResponse` of `ai` take.
 *
 * Contract: cancelling the stream unsubscribes from `events$` (an `Agent`'s run goes on: call
 * `agent.abort()` to stop it, as the chat handler does when its client leaves). A reader more
 * than `maxQueuedChunks` behind gets an `error` chunk and the end of its stream, so a client that
 * stops reading cannot hold a run's whole output in the server's memory.
 * @example const message = readUIMessageStream({ stream: toUIMessageStream(agent.prompt("hi")) });
 */
export function toUIMessageStream(events$: Observable<AgentEvent>, options: UIMessageStreamOptions = {}): ReadableStream<UIMessageChunk<unknown, RxagentDataParts>> {
  const { maxQueuedChunks = 10_000, ...chunkOptions } = options;
  let subscription: Subscription | undefined;
  /** Set once the reader fell too far behind: what the run sends after that is dropped. */
  let cutOff = false;
  return new ReadableStream({
    start(controller) {
      subscription = events$.pipe(toUIMessageChunks(chunkOptions)).subscribe({
        next: (chunk) => {
          if (cutOff) return;
          // With the default strategy (high-water mark 1) the queue holds 1 - desiredSize chunks;
          // the last place is kept for the error chunk.
          if (1 - (controller.desiredSize ?? 0) < maxQueuedChunks - 1) {
            controller.enqueue(chunk);
            return;
          }
          cutOff = true;
          controller.enqueue({ type: "error", errorText: SLOW_READER_TEXT });
          controller.close();
          subscription?.unsubscribe();
        },
        error: (error: unknown) => {
          if (!cutOff) controller.error(error);
        },
        complete: () => {
          if (!cutOff) controller.close();
        },
      });
      // A run that emitted synchronously past the allowance was cut off before `subscribe` returned.
      if (cutOff) subscription.unsubscribe();
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
      transform: (chunk, controller) => controller.enqueue(encoder.encode(`data: ${repairedJson(chunk)}\n\n`)),
      flush: (controller) => controller.enqueue(encoder.encode("data: [DONE]\n\n")),
    }),
  );
}
