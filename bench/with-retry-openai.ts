/**
 * What a `withRetry` layer costs on the OpenAI path: `node --import tsx bench/with-retry-openai.ts [deltas] [calls]`.
 *
 * A fake HTTP server streams one chat completion of `deltas` text deltas (W1 style: one reply,
 * many small events) as SSE; each call goes through the real `openai` SDK and `openaiChat`.
 * `openaiChat` is already one `withRetry` (its only retry, issue 31), so the figure is the
 * difference between `withRetry(openaiChat(...))` and `openaiChat(...)`: one layer more. The two
 * alternate call by call so that load moves both alike; each prints its median per call, and
 * the layer's cost per call and per event. The same events replayed from memory (no HTTP, no
 * SDK) give the layer's own cost per event without the network's noise.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { from, lastValueFrom, toArray } from "rxjs";
import { withRetry } from "../src/model/with-retry.js";
import { openaiChat } from "../src/openai/index.js";
import type { Model, ModelEvent } from "../src/types/model.js";

const deltas = Number(process.argv[2] ?? 1000);
const calls = Number(process.argv[3] ?? 60);

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const body = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 0, model: "bench-model", choices: [{ index: 0, delta, finish_reason: finishReason }] };
  return `data: ${JSON.stringify(body)}\n\n`;
}

// The response, made once: the server's own cost stays the same for both models.
const response = [chunk({ role: "assistant", content: "" }), ...Array.from({ length: deltas }, (_, index) => chunk({ content: `w${index} ` })), chunk({}, "stop"), "data: [DONE]\n\n"].join("");

const server = createServer((request, reply) => {
  request.resume();
  request.on("end", () => {
    reply.writeHead(200, { "content-type": "text/event-stream" });
    reply.end(response);
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

const context = { messages: [{ role: "user" as const, content: "hi", timestamp: 0 }] };
const shipped = openaiChat({ model: "bench-model", baseURL, apiKey: "k" });
const layered = withRetry(openaiChat({ model: "bench-model", baseURL, apiKey: "k" }));

async function timeCall(model: Model): Promise<number> {
  const started = performance.now();
  const last = await lastValueFrom(model.stream(context, { signal: new AbortController().signal }));
  if (last.type !== "done") throw new Error(`the call ended with ${last.type}`);
  return performance.now() - started;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

// Warm-up: JIT, the SDK's client, the keep-alive connection.
for (let index = 0; index < 10; index += 1) {
  await timeCall(shipped);
  await timeCall(layered);
}
const shippedTimes: number[] = [];
const layeredTimes: number[] = [];
const differences: number[] = [];
for (let index = 0; index < calls; index += 1) {
  const one = await timeCall(shipped);
  const two = await timeCall(layered);
  shippedTimes.push(one);
  layeredTimes.push(two);
  differences.push(two - one);
}

// The layer alone: the call's recorded events replayed from memory, bare and through withRetry.
const recorded: ModelEvent[] = await lastValueFrom(shipped.stream(context, { signal: new AbortController().signal }).pipe(toArray()));
server.close();
const replayed: Model = { id: "replayed", provider: "bench", api: "bench", stream: () => from(recorded) };
const replayedWithRetry = withRetry(replayed);
const memoryBare: number[] = [];
const memoryLayered: number[] = [];
for (let index = 0; index < 10 * calls; index += 1) {
  memoryBare.push(await timeCall(replayed));
  memoryLayered.push(await timeCall(replayedWithRetry));
}
const inMemoryLayerUs = (median(memoryLayered) - median(memoryBare)) * 1000;

const perCall = median(differences);
console.log(
  JSON.stringify({
    deltas,
    calls,
    openaiChatMs: Number(median(shippedTimes).toFixed(3)),
    withRetryOpenaiChatMs: Number(median(layeredTimes).toFixed(3)),
    layerPerCallMs: Number(perCall.toFixed(3)),
    layerPerEventUs: Number(((perCall * 1000) / recorded.length).toFixed(3)),
    inMemoryBareMs: Number(median(memoryBare).toFixed(4)),
    inMemoryWithRetryMs: Number(median(memoryLayered).toFixed(4)),
    inMemoryLayerPerEventUs: Number((inMemoryLayerUs / recorded.length).toFixed(4)),
  }),
);
