import { Type } from "@sinclair/typebox";
import OpenAI from "openai";
import { lastValueFrom, toArray } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { openaiChat, openaiResponses } from "../../src/openai/index.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { LlmContext } from "../../src/types/model.js";
import { loadFixture } from "../helpers/openai-fixtures.js";
import type { ReplayServer } from "../helpers/sse-replay-server.js";
import { startReplayServer } from "../helpers/sse-replay-server.js";

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const weatherParameters = Type.Object({ city: Type.String({ description: "City name" }), units: Type.Optional(Type.Union([Type.Literal("c"), Type.Literal("f")])) });
const weatherSchemaJson = {
  type: "object",
  properties: {
    city: { type: "string", description: "City name" },
    units: { anyOf: [{ const: "c", type: "string" }, { const: "f", type: "string" }] },
  },
  required: ["city"],
};
const pixel = "iVBORw0KGgo=";

function assistant(api: string, content: AssistantMessage["content"]): AssistantMessage {
  return { role: "assistant", content, api, provider: "openai", model: "test-model", usage: emptyUsage(), stopReason: "toolUse", timestamp: 2 };
}

function contextFor(api: string, toolCallId: string): LlmContext {
  return {
    systemPrompt: "You are terse.",
    tools: [{ name: "get_weather", description: "Current weather", parameters: weatherParameters }],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Weather here?" },
          { type: "image", data: pixel, mimeType: "image/png" },
        ],
        timestamp: 1,
      },
      assistant(api, [
        { type: "thinking", thinking: "The user wants weather.", thinkingSignature: JSON.stringify({ type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAAAenc", status: "completed" }) },
        { type: "text", text: "Checking.", textSignature: "msg_1" },
        { type: "toolCall", id: toolCallId, name: "get_weather", arguments: { city: "Oslo" } },
      ]),
      {
        role: "toolResult",
        toolCallId,
        toolName: "get_weather",
        content: [
          { type: "text", text: "-3 C, snow" },
          { type: "image", data: pixel, mimeType: "image/png" },
        ],
        isError: false,
        timestamp: 3,
      },
      { role: "user", content: "Thanks", timestamp: 4 },
    ],
  };
}

describe("request bodies", () => {
  it("chat: system prompt, TypeBox tools, images, assistant tool calls (no thinking), tool results", async () => {
    server = await startReplayServer([{ kind: "fixture", fixture: loadFixture("chat-text-usage-2") }]);
    const model = openaiChat({ model: "test-model", baseURL: server.baseURL, apiKey: "k", maxTokens: 256, temperature: 0.2, reasoningEffort: "low", strictTools: true });
    await lastValueFrom(model.stream(contextFor("openai-completions", "call_abc"), { signal: new AbortController().signal }).pipe(toArray()));
    expect(server.requests[0]?.body).toStrictEqual({
      model: "test-model",
      messages: [
        { role: "system", content: "You are terse." },
        {
          role: "user",
          content: [
            { type: "text", text: "Weather here?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${pixel}` } },
          ],
        },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [{ id: "call_abc", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
        },
        { role: "tool", tool_call_id: "call_abc", content: "-3 C, snow" },
        {
          role: "user",
          content: [
            { type: "text", text: "Images returned by the tool calls above:" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${pixel}` } },
          ],
        },
        { role: "user", content: "Thanks" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: "function", function: { name: "get_weather", description: "Current weather", parameters: weatherSchemaJson, strict: true } }],
      // A baseURL other than api.openai.com gets the field every compatible server knows.
      max_tokens: 256,
      temperature: 0.2,
      reasoning_effort: "low",
    });
  });

  it("chat: a call's thinkingLevel replaces the configured reasoningEffort; \"off\" sends none", async () => {
    const fixture = loadFixture("chat-text-usage-2");
    server = await startReplayServer([{ kind: "fixture", fixture }, { kind: "fixture", fixture }, { kind: "fixture", fixture }]);
    const model = openaiChat({ model: "o3-mini", baseURL: server.baseURL, apiKey: "k", reasoningEffort: "low", includeUsage: false });
    const context: LlmContext = { messages: [{ role: "user", content: "Hi", timestamp: 1 }] };
    for (const thinkingLevel of ["high", "off", undefined] as const) {
      const options = thinkingLevel === undefined ? { signal: new AbortController().signal } : { signal: new AbortController().signal, thinkingLevel };
      await lastValueFrom(model.stream(context, options).pipe(toArray()));
    }
    expect(server.requests.map((request) => (request.body as { reasoning_effort?: string }).reasoning_effort)).toStrictEqual(["high", undefined, "low"]);
  });

  it("chat: developer role, max_completion_tokens and extra body fields on request", async () => {
    server = await startReplayServer([{ kind: "fixture", fixture: loadFixture("chat-text-usage-2") }]);
    const model = openaiChat({
      model: "o3-mini",
      baseURL: server.baseURL,
      apiKey: "k",
      systemRole: "developer",
      maxTokens: 99,
      maxTokensField: "max_completion_tokens",
      extraBody: { top_k: 40 },
    });
    await lastValueFrom(model.stream({ systemPrompt: "Be brief.", messages: [{ role: "user", content: "Hi", timestamp: 1 }] }, { signal: new AbortController().signal }).pipe(toArray()));
    expect(server.requests[0]?.body).toStrictEqual({
      model: "o3-mini",
      messages: [
        { role: "developer", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 99,
      top_k: 40,
    });
  });

  it("responses: instructions, input items with reasoning sent back, function call and output", async () => {
    server = await startReplayServer([{ kind: "fixture", fixture: loadFixture("responses-text-1") }]);
    const model = openaiResponses({ model: "test-model", baseURL: server.baseURL, apiKey: "k", maxTokens: 512, reasoningEffort: "medium", reasoningSummary: "auto" });
    await lastValueFrom(model.stream(contextFor("openai-responses", "call_abc|fc_1"), { signal: new AbortController().signal }).pipe(toArray()));
    expect(server.requests[0]?.body).toStrictEqual({
      model: "test-model",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Weather here?" },
            { type: "input_image", image_url: `data:image/png;base64,${pixel}`, detail: "auto" },
          ],
        },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAAAenc" },
        { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "Checking.", annotations: [] }] },
        { type: "function_call", call_id: "call_abc", name: "get_weather", arguments: '{"city":"Oslo"}', id: "fc_1" },
        {
          type: "function_call_output",
          call_id: "call_abc",
          output: [
            { type: "input_text", text: "-3 C, snow" },
            { type: "input_image", image_url: `data:image/png;base64,${pixel}`, detail: "auto" },
          ],
        },
        { role: "user", content: "Thanks" },
      ],
      stream: true,
      store: false,
      instructions: "You are terse.",
      tools: [{ type: "function", name: "get_weather", description: "Current weather", parameters: weatherSchemaJson, strict: false }],
      max_output_tokens: 512,
      reasoning: { effort: "medium", summary: "auto" },
      include: ["reasoning.encrypted_content"],
    });
  });

  it("responses: a transcript from chat goes back without provider data", async () => {
    server = await startReplayServer([{ kind: "fixture", fixture: loadFixture("responses-text-1") }]);
    const model = openaiResponses({ model: "test-model", baseURL: server.baseURL, apiKey: "k" });
    const context = contextFor("openai-completions", "call_abc");
    await lastValueFrom(model.stream({ messages: context.messages.slice(1, 3) }, { signal: new AbortController().signal }).pipe(toArray()));
    expect(server.requests[0]?.body).toStrictEqual({
      model: "test-model",
      input: [
        { role: "assistant", content: "Checking." },
        { type: "function_call", call_id: "call_abc", name: "get_weather", arguments: '{"city":"Oslo"}' },
        {
          type: "function_call_output",
          call_id: "call_abc",
          output: [
            { type: "input_text", text: "-3 C, snow" },
            { type: "input_image", image_url: `data:image/png;base64,${pixel}`, detail: "auto" },
          ],
        },
      ],
      stream: true,
      store: false,
    });
  });

  // Both APIs answer HTTP 400 to a result without its call or a call without its result, and so
  // to every later request: a transformContext that kept the last n messages wedged the session.
  it("pairs results with calls in both APIs: a result whose call was cut is left out, a call without its result gets one", async () => {
    const cut = (api: string, separator: string): LlmContext => ({
      messages: [
        { role: "toolResult", toolCallId: `call_cut${separator}`, toolName: "get_weather", content: [{ type: "text", text: "-3 C" }], isError: false, timestamp: 3 },
        { role: "user", content: "Thanks", timestamp: 4 },
        assistant(api, [{ type: "toolCall", id: `call_kept${separator}`, name: "get_weather", arguments: { city: "Oslo" } }]),
        { role: "user", content: "And tomorrow?", timestamp: 6 },
      ],
    });
    server = await startReplayServer([
      { kind: "fixture", fixture: loadFixture("chat-text-usage-2") },
      { kind: "fixture", fixture: loadFixture("responses-text-1") },
    ]);
    const signal = new AbortController().signal;
    await lastValueFrom(openaiChat({ model: "test-model", baseURL: server.baseURL, apiKey: "k" }).stream(cut("openai-completions", ""), { signal }).pipe(toArray()));
    expect((server.requests[0]?.body as { messages: unknown[] }).messages).toStrictEqual([
      { role: "user", content: "Thanks" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_kept", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
      { role: "tool", tool_call_id: "call_kept", content: "No result of this tool call is in the conversation any more." },
      { role: "user", content: "And tomorrow?" },
    ]);
    await lastValueFrom(openaiResponses({ model: "test-model", baseURL: server.baseURL, apiKey: "k" }).stream(cut("openai-responses", "|fc_1"), { signal }).pipe(toArray()));
    expect((server.requests[1]?.body as { input: unknown[] }).input).toStrictEqual([
      { role: "user", content: "Thanks" },
      { type: "function_call", call_id: "call_kept", name: "get_weather", arguments: '{"city":"Oslo"}', id: "fc_1" },
      { type: "function_call_output", call_id: "call_kept", output: "No result of this tool call is in the conversation any more." },
      { role: "user", content: "And tomorrow?" },
    ]);
  });

  it("no credentials and no baseURL: an error event, no exception", async () => {
    const saved = { key: process.env["OPENAI_API_KEY"], url: process.env["OPENAI_BASE_URL"] };
    delete process.env["OPENAI_API_KEY"];
    delete process.env["OPENAI_BASE_URL"];
    try {
      const model = openaiChat({ model: "gpt-4.1" });
      const events = await lastValueFrom(model.stream({ messages: [] }, { signal: new AbortController().signal }).pipe(toArray()));
      expect(events.map((event) => event.type)).toStrictEqual(["start", "error"]);
      expect(events[1]).toMatchObject({ reason: "error", error: { stopReason: "error", errorMessage: expect.stringMatching(/^Missing credentials/) } });
    } finally {
      if (saved.key !== undefined) process.env["OPENAI_API_KEY"] = saved.key;
      if (saved.url !== undefined) process.env["OPENAI_BASE_URL"] = saved.url;
    }
  });

  it("sends a call whose arguments were not a JSON object back as the model wrote them, in both APIs", async () => {
    const raw = '{"city":"Edinburgh","country":"UK';
    const messages: LlmContext["messages"] = [
      { role: "user", content: "Weather?", timestamp: 1 },
      assistant("openai-completions", [{ type: "toolCall", id: "call_1", name: "get_weather", arguments: { city: "Edinburgh", country: "UK" }, rawArguments: raw }]),
      { role: "toolResult", toolCallId: "call_1", toolName: "get_weather", content: [{ type: "text", text: "not valid JSON" }], isError: true, timestamp: 3 },
    ];
    server = await startReplayServer([
      { kind: "fixture", fixture: loadFixture("chat-text-usage-2") },
      { kind: "fixture", fixture: loadFixture("responses-text-1") },
    ]);
    const options = { model: "m", baseURL: server.baseURL, apiKey: "k" };
    await lastValueFrom(openaiChat(options).stream({ messages }, { signal: new AbortController().signal }).pipe(toArray()));
    await lastValueFrom(openaiResponses(options).stream({ messages }, { signal: new AbortController().signal }).pipe(toArray()));
    const chatBody = server.requests[0]?.body as { messages: { tool_calls?: { function: { arguments: string } }[] }[] };
    const responsesBody = server.requests[1]?.body as { input: { type?: string; arguments?: string }[] };
    expect(chatBody.messages[1]?.tool_calls?.[0]?.function.arguments).toBe(raw);
    expect(responsesBody.input.find((item) => item.type === "function_call")?.arguments).toBe(raw);
  });

  it("chat: a given client's baseURL decides the max tokens field, as baseURL does", async () => {
    server = await startReplayServer([{ kind: "fixture", fixture: loadFixture("chat-text-usage-2") }]);
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "k", maxRetries: 0 });
    const model = openaiChat({ model: "llama3", client, maxTokens: 64 });
    await lastValueFrom(model.stream({ messages: [{ role: "user", content: "Hi", timestamp: 1 }] }, { signal: new AbortController().signal }).pipe(toArray()));
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect([body["max_tokens"], body["max_completion_tokens"]]).toStrictEqual([64, undefined]);
  });
});
