import type { Span } from "@opentelemetry/api";
import OpenAI from "openai";
import { lastValueFrom } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { openaiChat } from "../../src/openai/index.js";
import { withTelemetry } from "../../src/otel/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { loadFixture } from "../helpers/openai-fixtures.js";
import type { ReplayServer } from "../helpers/sse-replay-server.js";
import { startReplayServer } from "../helpers/sse-replay-server.js";
import { idOf, named, parentOf, useTracing } from "./tracing.js";

const { exporter, tracer } = useTracing();

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** What an HTTP instrumentation does: each request a span of its own, opened in the active context. */
const tracedFetch: typeof fetch = (input, init) =>
  tracer.startActiveSpan(`POST ${new URL(String(input)).pathname}`, (span: Span) => fetch(input, init).finally(() => span.end()));

describe("withTelemetry over the OpenAI provider", () => {
  it("the provider's HTTP requests, a retried one too, nest under the chat span, which names the model that answered", async () => {
    server = await startReplayServer([
      { kind: "http-error", status: 500, body: { error: { message: "The server had an error", type: "server_error" } } },
      { kind: "fixture", fixture: loadFixture("chat-text-usage-2") },
    ]);
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "k", fetch: tracedFetch });
    const model = openaiChat({ model: "test-model", client, retryBaseDelayMs: 1 });
    await lastValueFrom(agentLoop([{ role: "user", content: "Hello", timestamp: 0 }], { messages: [] }, withTelemetry({ model }, { tracer })));
    const spans = exporter.getFinishedSpans();
    const [chat] = named(spans, "chat test-model");
    const requests = named(spans, "POST /v1/chat/completions");
    expect(requests.map(parentOf)).toStrictEqual([idOf(chat!), idOf(chat!)]);
    expect(parentOf(chat!)).toBe(idOf(named(spans, "invoke_agent")[0]!));
    expect(chat!.attributes).toMatchObject({ "gen_ai.provider.name": "openai", "gen_ai.request.model": "test-model", "gen_ai.usage.input_tokens": 14, "gen_ai.usage.output_tokens": 30 });
    expect(chat!.status.code).toBe(0);
  });
});
