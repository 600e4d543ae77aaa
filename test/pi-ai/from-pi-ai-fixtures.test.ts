import { Type } from "@sinclair/typebox";
import { lastValueFrom, of, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { fromPiAi } from "../../src/pi-ai/index.js";
import type { PiAiModelOptions } from "../../src/pi-ai/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AssistantMessage, LlmContext, ModelEvent, ToolCall } from "../../src/types.js";
import { assertModelEventGrammar, collectModelEvents, finalMessage } from "../helpers/model-event-grammar.js";
import {
  expectedAnthropicMessage,
  expectedGeminiMessage,
  type FixtureProvider,
  loadProviderFixture,
  piAiTestModel,
  type ProviderFixture,
  providerFrames,
} from "../helpers/provider-fixtures.js";
import { type RecordedRequest, type ReplayServer, startReplayServer } from "../helpers/sse-replay-server.js";

const anthropicRecordings = [
  "text-1",
  "text-2",
  "text-3-opus-4-6",
  "prompt-cache-write",
  "tool-use-single-text-first",
  "tool-use-single-only",
  "tool-use-no-args",
  "tool-use-parallel-1",
  "tool-use-parallel-3",
  "thinking-text",
  "thinking-adaptive-text-first",
  "thinking-redacted",
];
const geminiRecordings = ["text-1", "text-2", "thinking-text", "tool-call-1"];

const question: LlmContext = { systemPrompt: "Be brief.", messages: [{ role: "user", content: "Hello", timestamp: 1 }] };

/** The server's origin: pi-ai's providers add their own paths (`/v1/messages`, `/models/...`). */
function originOf(server: ReplayServer): string {
  return server.baseURL.replace(/\/v1$/, "");
}

async function replay(
  provider: FixtureProvider,
  name: string,
  options: PiAiModelOptions = {},
): Promise<{ fixture: ProviderFixture; events: ModelEvent[]; message: AssistantMessage; request: RecordedRequest }> {
  const fixture = loadProviderFixture(provider, name);
  const server = await startReplayServer([{ kind: "frames", frames: providerFrames(fixture) }]);
  try {
    const model = fromPiAi(piAiTestModel(fixture, originOf(server)), { apiKey: "test-key", maxRetries: 0, ...options });
    const { events, copies } = await collectModelEvents(model.stream(question, { signal: new AbortController().signal }));
    assertModelEventGrammar(events, copies);
    return { fixture, events, message: finalMessage(events), request: server.requests[0]! };
  } finally {
    await server.close();
  }
}

/** Every non-empty delta the recording sent, in order, by kind. */
function recordedDeltas(fixture: ProviderFixture): string[] {
  const deltas: string[] = [];
  for (const chunk of fixture.chunks) {
    if (fixture.api === "anthropic.messages") {
      const delta = chunk["delta"] as { type?: string; text?: string; thinking?: string; partial_json?: string } | undefined;
      if (chunk["type"] !== "content_block_delta" || delta === undefined) continue;
      if (delta.type === "text_delta") deltas.push(`text:${delta.text}`);
      if (delta.type === "thinking_delta") deltas.push(`thinking:${delta.thinking}`);
      if (delta.type === "input_json_delta") deltas.push(`toolcall:${delta.partial_json}`);
    } else {
      const parts = (chunk["candidates"] as { content?: { parts?: { text?: string; thought?: boolean; functionCall?: { args?: unknown } }[] } }[])[0]?.content?.parts ?? [];
      for (const part of parts) {
        if (part.text !== undefined) deltas.push(`${part.thought ? "thinking" : "text"}:${part.text}`);
        if (part.functionCall) deltas.push(`toolcall:${JSON.stringify(part.functionCall.args ?? {})}`);
      }
    }
  }
  return deltas.filter((delta) => !["text:", "thinking:", "toolcall:"].includes(delta));
}

function deltasOf(events: ModelEvent[]): string[] {
  return events.flatMap((event) =>
    event.type === "text_delta" || event.type === "thinking_delta" || event.type === "toolcall_delta"
      ? [`${event.type.slice(0, -"_delta".length)}:${event.delta}`]
      : [],
  );
}

function expectedMessage(fixture: ProviderFixture): AssistantMessage {
  const expected = fixture.api === "anthropic.messages" ? expectedAnthropicMessage(fixture) : expectedGeminiMessage(fixture);
  return { ...expected, timestamp: expect.any(Number) as unknown as number };
}

describe.each([
  ...anthropicRecordings.map((name) => ["anthropic", name] as const),
  ...geminiRecordings.map((name) => ["gemini", name] as const),
])("fromPiAi replaying %s %s through pi-ai's own provider", (provider, name) => {
  it("delivers the recorded message exactly, with the recorded deltas unchanged", async () => {
    const { fixture, events, message } = await replay(provider, name);
    expect(message).toStrictEqual(expectedMessage(fixture));
    expect(deltasOf(events)).toStrictEqual(recordedDeltas(fixture));
  });

  it("runs the recorded tool calls in an agent run and sends their results back", async () => {
    const fixture = loadProviderFixture(provider, name);
    const recordedCalls = expectedMessage(fixture).content.filter((block): block is ToolCall => block.type === "toolCall");
    const executed: { name: string; args: unknown }[] = [];
    const tools = [...new Set(recordedCalls.map((call) => call.name))].map((toolName) =>
      defineTool({
        name: toolName,
        description: `The recorded ${toolName} tool`,
        parameters: Type.Object({}),
        execute: (_id, args) => {
          executed.push({ name: toolName, args });
          return textResult(`${toolName} says ${JSON.stringify(args)}`);
        },
      }),
    );
    const answer = loadProviderFixture(provider, provider === "anthropic" ? "text-1" : "text-2");
    const steps = [{ kind: "frames" as const, frames: providerFrames(fixture) }];
    if (recordedCalls.length > 0) steps.push({ kind: "frames", frames: providerFrames(answer) });
    const server = await startReplayServer(steps);
    try {
      const model = fromPiAi(piAiTestModel(fixture, originOf(server)), { apiKey: "test-key", maxRetries: 0 });
      const prompt = { role: "user" as const, content: "Go", timestamp: 1 };
      const events: AgentEvent[] = await lastValueFrom(
        agentLoop([prompt], { systemPrompt: "Be brief.", messages: [], tools }, { model }).pipe(toArray()),
      );
      assertEventGrammar(events);
      const end = events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>;
      const assistants = end.messages.filter((message): message is AssistantMessage => message.role === "assistant");
      expect(assistants[0]).toStrictEqual(expectedMessage(fixture));
      expect(executed).toStrictEqual(recordedCalls.map((call) => ({ name: call.name, args: call.arguments })));
      expect(end.messages.map((message) => message.role)).toStrictEqual(
        recordedCalls.length === 0 ? ["user", "assistant"] : ["user", "assistant", ...recordedCalls.map(() => "toolResult"), "assistant"],
      );
      expect(server.requests).toHaveLength(steps.length);
      if (recordedCalls.length > 0) {
        expect(assistants[1]).toStrictEqual({ ...expectedMessage(answer), model: fixture.model });
        expect(toolResultsSent(provider, server.requests[1]!)).toStrictEqual(
          recordedCalls.map((call) => ({ id: provider === "anthropic" ? call.id : call.name, text: `${call.name} says ${JSON.stringify(call.arguments)}` })),
        );
      }
    } finally {
      await server.close();
    }
  });
});

/** The tool results a follow-up request carried: Anthropic `tool_result` blocks, Gemini `functionResponse` parts. */
function toolResultsSent(provider: FixtureProvider, request: RecordedRequest): { id: string; text: string }[] {
  if (provider === "anthropic") {
    const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
    return messages.flatMap((message) =>
      Array.isArray(message.content)
        ? (message.content as { type: string; tool_use_id?: string; content?: unknown }[])
            .filter((block) => block.type === "tool_result")
            .map((block) => ({ id: block.tool_use_id!, text: textOf(block.content) }))
        : [],
    );
  }
  const contents = (request.body as { contents: { parts: { functionResponse?: { name: string; response: unknown } }[] }[] }).contents;
  return contents.flatMap((content) =>
    content.parts.flatMap((part) => (part.functionResponse ? [{ id: part.functionResponse.name, text: textOf(part.functionResponse.response) }] : [])),
  );
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((block: { text?: string }) => block.text ?? "").join("");
  const output = (content as { output?: unknown } | undefined)?.output;
  return typeof output === "string" ? output : JSON.stringify(content);
}

describe("fromPiAi sends thinking back as it came", () => {
  it.each(["thinking-text", "thinking-redacted"])("%s: the next request carries the thinking blocks with their signatures or redacted data", async (name) => {
    const fixture = loadProviderFixture("anthropic", name);
    const server = await startReplayServer([
      { kind: "frames", frames: providerFrames(fixture) },
      { kind: "frames", frames: providerFrames(loadProviderFixture("anthropic", "text-1")) },
    ]);
    try {
      const model = fromPiAi(piAiTestModel(fixture, originOf(server)), { apiKey: "test-key", maxRetries: 0 });
      const prompt = { role: "user" as const, content: "Go", timestamp: 1 };
      const later = { role: "user" as const, content: "And now?", timestamp: 2 };
      const events: AgentEvent[] = await lastValueFrom(agentLoop([prompt], { messages: [] }, { model, followUp: of(later) }).pipe(toArray()));
      assertEventGrammar(events);
      const sent = (server.requests[1]!.body as { messages: { role: string; content: Record<string, unknown>[] }[] }).messages[1]!;
      const expected = expectedAnthropicMessage(fixture).content.map((block) => {
        if (block.type === "thinking" && block.redacted) return { type: "redacted_thinking", data: block.thinkingSignature };
        if (block.type === "thinking") return { type: "thinking", thinking: block.thinking, signature: block.thinkingSignature };
        return { type: "text", text: block.type === "text" ? block.text : "" };
      });
      expect(sent.role).toBe("assistant");
      expect(sent.content.map(({ cache_control: _cacheControl, ...block }) => block)).toStrictEqual(expected);
    } finally {
      await server.close();
    }
  });
});
