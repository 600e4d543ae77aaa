import { Type } from "@sinclair/typebox";
import { lastValueFrom, Subscription, tap, toArray } from "rxjs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fromPiAi } from "../../src/pi-ai/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import type { AgentEvent, AssistantMessage, LlmContext, ModelEvent } from "../../src/types.js";
import { assertModelEventGrammar, finalMessage } from "../helpers/model-event-grammar.js";
import { expectedAnthropicMessage, loadProviderFixture, piAiTestModel, providerFrames, usageOf } from "../helpers/provider-fixtures.js";
import { type ReplayServer, startReplayServer } from "../helpers/sse-replay-server.js";

const question: LlmContext = {
  systemPrompt: "Be brief.",
  messages: [{ role: "user", content: "Hello", timestamp: 1 }],
  tools: [{ name: "get_weather", description: "Weather", parameters: Type.Object({ city: Type.String() }) }],
};
const thinking = loadProviderFixture("anthropic", "thinking-text");
const gemini = loadProviderFixture("gemini", "text-2");
// Synthetic (no public recording of one exists, see the fixtures README): the error body
// Anthropic documents for an overloaded API.
const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
const geminiInternal = { error: { code: 500, message: "Internal error encountered.", status: "INTERNAL" } };

let server: ReplayServer | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
});

const originOf = (replay: ReplayServer) => replay.baseURL.replace(/\/v1$/, "");
const failedMessage = (model: string, api: string, provider: string, errorMessage: string): AssistantMessage => ({
  role: "assistant",
  content: [],
  api,
  provider,
  model,
  usage: usageOf(0, 0, 0, 0, 0),
  stopReason: "error",
  errorMessage,
  timestamp: expect.any(Number) as unknown as number,
});

/** The thinking text the first `frames` chunks of the recording carry. */
function thinkingSentIn(frames: number): string {
  return thinking.chunks
    .slice(0, frames)
    .map((chunk) => (chunk["delta"] as { thinking?: string } | undefined)?.thinking ?? "")
    .join("");
}

describe("fromPiAi failures are data", () => {
  it("an abort mid-stream ends with an aborted message that keeps the content and usage so far, and closes the request", async () => {
    const held = 8;
    server = await startReplayServer([{ kind: "frames", frames: providerFrames(thinking), holdAfter: held }]);
    const controller = new AbortController();
    const model = fromPiAi(piAiTestModel(thinking, originOf(server)), { apiKey: "test-key", maxRetries: 0 });
    const sent = thinkingSentIn(held);
    // Aborts once every held frame has come through, so what the message holds is known.
    const events = await lastValueFrom(
      model.stream(question, { signal: controller.signal }).pipe(
        tap((event) => {
          const block = "partial" in event ? event.partial.content[0] : undefined;
          if (block?.type === "thinking" && block.thinking === sent) controller.abort();
        }),
        toArray(),
      ),
    );
    assertModelEventGrammar(events);
    const startUsage = (thinking.chunks[0]!["message"] as { usage: { input_tokens: number; output_tokens: number } }).usage;
    expect(finalMessage(events)).toStrictEqual({
      role: "assistant",
      content: [{ type: "thinking", thinking: sent, thinkingSignature: "" }],
      api: "anthropic-messages",
      provider: "anthropic",
      model: thinking.model,
      responseId: expectedAnthropicMessage(thinking).responseId,
      usage: usageOf(startUsage.input_tokens, startUsage.output_tokens, 0, 0, startUsage.input_tokens + startUsage.output_tokens),
      stopReason: "aborted",
      errorMessage: "This operation was aborted",
      timestamp: expect.any(Number),
    });
    await server.requests[0]!.closedByClient;
  });

  it("unsubscribing mid-stream aborts the HTTP request", async () => {
    server = await startReplayServer([{ kind: "frames", frames: providerFrames(thinking), holdAfter: 5 }]);
    const model = fromPiAi(piAiTestModel(thinking, originOf(server)), { apiKey: "test-key", maxRetries: 0 });
    const seen: ModelEvent["type"][] = [];
    const subscription = new Subscription();
    await new Promise<void>((resolve) => {
      subscription.add(
        model.stream(question, { signal: new AbortController().signal }).subscribe((event) => {
          seen.push(event.type);
          if (event.type === "thinking_delta") resolve();
        }),
      );
    });
    subscription.unsubscribe();
    // Resolves only when the server sees the client close the connection; the test times out otherwise.
    await server.requests[0]!.closedByClient;
    expect(seen).toStrictEqual(["start", "thinking_start", "thinking_delta"]);
  });

  it("an HTTP 529 from Anthropic is an error message naming the status and the body; no retry with maxRetries 0", async () => {
    server = await startReplayServer([{ kind: "http-error", status: 529, body: overloaded }]);
    const model = fromPiAi(piAiTestModel(thinking, originOf(server)), { apiKey: "test-key", maxRetries: 0 });
    const events = await lastValueFrom(model.stream(question, { signal: new AbortController().signal }).pipe(toArray()));
    assertModelEventGrammar(events);
    expect(events.map((event) => event.type)).toStrictEqual(["start", "error"]);
    expect(finalMessage(events)).toStrictEqual(
      failedMessage(thinking.model, "anthropic-messages", "anthropic", `529 ${JSON.stringify(overloaded)}`),
    );
    expect(server.requests).toHaveLength(1);
  });

  it("Anthropic's SDK retries a 529 when allowed (retry-after-ms keeps it quick) and the recorded answer comes through", async () => {
    server = await startReplayServer([
      { kind: "http-error", status: 529, body: overloaded, headers: { "retry-after-ms": "1" } },
      { kind: "frames", frames: providerFrames(thinking) },
    ]);
    const model = fromPiAi(piAiTestModel(thinking, originOf(server)), { apiKey: "test-key", maxRetries: 1 });
    const events = await lastValueFrom(model.stream(question, { signal: new AbortController().signal }).pipe(toArray()));
    assertModelEventGrammar(events);
    expect(finalMessage(events)).toStrictEqual({ ...expectedAnthropicMessage(thinking), timestamp: expect.any(Number) });
    expect(server.requests).toHaveLength(2);
  });

  // Issue 27, row 8: a proxy that quotes the key in its 401 put it verbatim in errorMessage.
  it("an HTTP 401 that quotes the API key is an error message with the key blanked", async () => {
    const apiKey = "proxy-key-0042-do-not-leak";
    const body = { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${apiKey}` } };
    server = await startReplayServer([{ kind: "http-error", status: 401, body }]);
    const model = fromPiAi(piAiTestModel(thinking, originOf(server)), { apiKey, maxRetries: 0 });
    const events = await lastValueFrom(model.stream(question, { signal: new AbortController().signal }).pipe(toArray()));
    assertModelEventGrammar(events);
    const redacted = { ...body, error: { ...body.error, message: "invalid x-api-key [redacted]" } };
    expect(finalMessage(events)).toStrictEqual(failedMessage(thinking.model, "anthropic-messages", "anthropic", `401 ${JSON.stringify(redacted)}`));
  });

  // With no apiKey given, pi-ai takes the provider's key from its environment variable, and the
  // error text went out with it whole: only the patterns of a few providers' keys were blanked.
  it("an HTTP 401 that quotes the key pi-ai took from the environment is an error message with the key blanked", async () => {
    const environmentKey = "env-key-0042-do-not-leak";
    vi.stubEnv("ANTHROPIC_API_KEY", environmentKey);
    vi.stubEnv("ANTHROPIC_OAUTH_TOKEN", "");
    const body = { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${environmentKey}` } };
    server = await startReplayServer([{ kind: "http-error", status: 401, body }]);
    const model = fromPiAi(piAiTestModel(thinking, originOf(server)), { maxRetries: 0 });
    const events = await lastValueFrom(model.stream(question, { signal: new AbortController().signal }).pipe(toArray()));
    const redacted = { ...body, error: { ...body.error, message: "invalid x-api-key [redacted]" } };
    expect(finalMessage(events)).toStrictEqual(failedMessage(thinking.model, "anthropic-messages", "anthropic", `401 ${JSON.stringify(redacted)}`));
  });

  it("an HTTP 500 from Anthropic is an error message", async () => {
    const body = { type: "error", error: { type: "api_error", message: "Internal server error" } };
    server = await startReplayServer([{ kind: "http-error", status: 500, body }]);
    const model = fromPiAi(piAiTestModel(thinking, originOf(server)), { apiKey: "test-key", maxRetries: 0 });
    const events = await lastValueFrom(model.stream(question, { signal: new AbortController().signal }).pipe(toArray()));
    assertModelEventGrammar(events);
    expect(finalMessage(events)).toStrictEqual(failedMessage(thinking.model, "anthropic-messages", "anthropic", `500 ${JSON.stringify(body)}`));
    expect(server.requests).toHaveLength(1);
  });

  it("an HTTP 500 from Gemini is an error message; pi-ai's Google client does not retry", async () => {
    server = await startReplayServer([{ kind: "http-error", status: 500, body: geminiInternal }]);
    const model = fromPiAi(piAiTestModel(gemini, originOf(server)), { apiKey: "test-key" });
    const events = await lastValueFrom(model.stream(question, { signal: new AbortController().signal }).pipe(toArray()));
    assertModelEventGrammar(events);
    expect(finalMessage(events)).toStrictEqual(failedMessage(gemini.model, "google-generative-ai", "google", JSON.stringify(geminiInternal)));
    expect(server.requests).toHaveLength(1);
  });

  it("no API key is an error message, not a throw", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    vi.stubEnv("ANTHROPIC_OAUTH_TOKEN", "");
    const model = fromPiAi(piAiTestModel(thinking, "http://127.0.0.1:9"));
    const events = await lastValueFrom(model.stream(question, { signal: new AbortController().signal }).pipe(toArray()));
    assertModelEventGrammar(events);
    expect(finalMessage(events)).toStrictEqual(failedMessage(thinking.model, "anthropic-messages", "anthropic", "No API key for provider: anthropic"));
  });

  it("aborting an agent run mid-stream ends it gracefully with the partial assistant message", async () => {
    const held = 8;
    server = await startReplayServer([{ kind: "frames", frames: providerFrames(thinking), holdAfter: held }]);
    const controller = new AbortController();
    const model = fromPiAi(piAiTestModel(thinking, originOf(server)), { apiKey: "test-key", maxRetries: 0 });
    const sent = thinkingSentIn(held);
    const prompt = { role: "user" as const, content: "Hello", timestamp: 1 };
    const events: AgentEvent[] = await lastValueFrom(
      agentLoop([prompt], { messages: [] }, { model, signal: controller.signal }).pipe(
        tap((event) => {
          const block = event.type === "message_update" ? event.message.content[0] : undefined;
          if (block?.type === "thinking" && block.thinking === sent) controller.abort();
        }),
        toArray(),
      ),
    );
    assertEventGrammar(events);
    const end = events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>;
    const assistant = end.messages[1] as AssistantMessage;
    expect([assistant.stopReason, assistant.content]).toStrictEqual(["aborted", [{ type: "thinking", thinking: sent }]]);
    await server.requests[0]!.closedByClient;
  });
});

describe("fromPiAi requests", () => {
  it("sends the system prompt, the messages and each tool's name, description and JSON Schema", async () => {
    server = await startReplayServer([
      { kind: "frames", frames: providerFrames(thinking) },
      { kind: "frames", frames: providerFrames(gemini) },
    ]);
    const anthropic = fromPiAi(piAiTestModel(thinking, originOf(server)), { apiKey: "test-key", maxRetries: 0, headers: { "x-team": "rx" } });
    await lastValueFrom(anthropic.stream(question, { signal: new AbortController().signal }));
    const google = fromPiAi(piAiTestModel(gemini, originOf(server)), { apiKey: "test-key" });
    await lastValueFrom(google.stream(question, { signal: new AbortController().signal }));
    const [toAnthropic, toGemini] = server.requests;
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const anthropicBody = toAnthropic!.body as { system: { text: string }[]; messages: { role: string; content: { text: string }[] }[]; tools: Record<string, unknown>[] };
    expect([toAnthropic!.url, toAnthropic!.headers["x-api-key"], toAnthropic!.headers["x-team"]]).toStrictEqual(["/v1/messages", "test-key", "rx"]);
    expect(anthropicBody.system.map((block) => block.text)).toStrictEqual(["Be brief."]);
    expect(anthropicBody.messages.map((message) => [message.role, message.content.map((block) => block.text)])).toStrictEqual([["user", ["Hello"]]]);
    expect(anthropicBody.tools.map(({ name, description, input_schema }) => ({ name, description, input_schema }))).toStrictEqual([
      { name: "get_weather", description: "Weather", input_schema: schema },
    ]);
    const geminiBody = toGemini!.body as { systemInstruction: { parts: { text: string }[] }; contents: unknown[]; tools: { functionDeclarations: Record<string, unknown>[] }[] };
    expect(toGemini!.url).toBe(`/models/${gemini.model}:streamGenerateContent?alt=sse`);
    expect(geminiBody.systemInstruction.parts).toStrictEqual([{ text: "Be brief." }]);
    expect(geminiBody.contents).toStrictEqual([{ role: "user", parts: [{ text: "Hello" }] }]);
    expect(geminiBody.tools).toStrictEqual([{ functionDeclarations: [{ name: "get_weather", description: "Weather", parametersJsonSchema: schema }] }]);
  });
});
