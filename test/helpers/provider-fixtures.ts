import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Api, Model as PiAiModel } from "@mariozechner/pi-ai";
import { expect } from "vitest";
import type { AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall, Usage } from "../../src/types/messages.js";

/**
 * A recorded Anthropic or Gemini stream from `test/fixtures/anthropic/` or `gemini/` (format and
 * provenance in their READMEs).
 */
export interface ProviderFixture {
  source: string;
  api: "anthropic.messages" | "gemini.streamGenerateContent";
  model: string;
  expected: Record<string, unknown>;
  chunks: Record<string, unknown>[];
}

export type FixtureProvider = "anthropic" | "gemini";

const fixtureRoot = fileURLToPath(new URL("../fixtures/", import.meta.url));

export function loadProviderFixture(provider: FixtureProvider, name: string): ProviderFixture {
  return JSON.parse(readFileSync(`${fixtureRoot}${provider}/${name}.json`, "utf8")) as ProviderFixture;
}

/**
 * The SSE frames as the provider sent them: Anthropic names every frame's event after its
 * `type` (the READMEs say the recorded names always equal it); Gemini sends bare `data:` lines
 * with CRLF line endings.
 */
export function providerFrames(fixture: ProviderFixture): string[] {
  return fixture.chunks.map((chunk) =>
    fixture.api === "anthropic.messages"
      ? `event: ${String(chunk["type"])}\ndata: ${JSON.stringify(chunk)}\n\n`
      : `data: ${JSON.stringify(chunk)}\r\n\r\n`,
  );
}

/** Prices per million tokens for the test models, so the cost arithmetic is checked too. */
export const testPrices = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/** A pi-ai model of the recording's provider and id, sending its requests to `baseUrl`. */
export function piAiTestModel(fixture: ProviderFixture, baseUrl: string): PiAiModel<Api> {
  const anthropic = fixture.api === "anthropic.messages";
  return {
    id: fixture.model,
    name: fixture.model,
    api: anthropic ? "anthropic-messages" : "google-generative-ai",
    provider: anthropic ? "anthropic" : "google",
    baseUrl,
    reasoning: false,
    input: ["text"],
    cost: testPrices,
    contextWindow: 200_000,
    maxTokens: 4096,
  };
}

/** Usage with its cost at the test prices. */
export function usageOf(input: number, output: number, cacheRead: number, cacheWrite: number, totalTokens: number): Usage {
  const cost = {
    input: (testPrices.input / 1_000_000) * input,
    output: (testPrices.output / 1_000_000) * output,
    cacheRead: (testPrices.cacheRead / 1_000_000) * cacheRead,
    cacheWrite: (testPrices.cacheWrite / 1_000_000) * cacheWrite,
    total: 0,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return { input, output, cacheRead, cacheWrite, totalTokens, cost };
}

type Block = TextContent | ThinkingContent | ToolCall;

/**
 * The final message an adapter must deliver for an Anthropic recording, from the README's
 * `expected` (computed by a separate accumulator) plus the signatures and redacted data, which
 * `expected` lists only by length: those are taken from the chunks and their lengths checked.
 */
export function expectedAnthropicMessage(fixture: ProviderFixture): Omit<AssistantMessage, "timestamp"> {
  const expected = fixture.expected as {
    id: string;
    content: Record<string, unknown>[];
    stop_reason: string;
    usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number };
  };
  const signatures = new Map<number, string>();
  const redactedData = new Map<number, string>();
  for (const chunk of fixture.chunks) {
    const index = chunk["index"] as number;
    const delta = chunk["delta"] as { type?: string; signature?: string } | undefined;
    if (chunk["type"] === "content_block_delta" && delta?.type === "signature_delta") {
      signatures.set(index, (signatures.get(index) ?? "") + delta.signature);
    }
    const block = chunk["content_block"] as { type?: string; data?: string } | undefined;
    if (chunk["type"] === "content_block_start" && block?.type === "redacted_thinking") redactedData.set(index, block.data ?? "");
  }
  const content = expected.content.map((block, index): Block => {
    switch (block["type"]) {
      case "text":
        return { type: "text", text: block["text"] as string };
      case "thinking": {
        const signature = signatures.get(index) ?? "";
        if (signature.length !== block["signature_length"]) throw new Error(`signature of block ${index} has the wrong length`);
        return { type: "thinking", thinking: block["thinking"] as string, thinkingSignature: signature };
      }
      case "redacted_thinking": {
        const data = redactedData.get(index) ?? "";
        if (data.length !== block["data_length"]) throw new Error(`redacted data of block ${index} has the wrong length`);
        return { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: data, redacted: true };
      }
      case "tool_use":
        return { type: "toolCall", id: block["id"] as string, name: block["name"] as string, arguments: block["input"] as Record<string, unknown> };
      default:
        throw new Error(`unexpected block type ${String(block["type"])}`);
    }
  });
  const stopReasons: Record<string, StopReason> = { end_turn: "stop", tool_use: "toolUse", max_tokens: "length" };
  const { input_tokens: input, output_tokens: output } = expected.usage;
  const cacheRead = expected.usage.cache_read_input_tokens ?? 0;
  const cacheWrite = expected.usage.cache_creation_input_tokens ?? 0;
  return {
    role: "assistant",
    content,
    api: "anthropic-messages",
    provider: "anthropic",
    model: fixture.model,
    responseId: expected.id,
    usage: usageOf(input, output, cacheRead, cacheWrite, input + output + cacheRead + cacheWrite),
    stopReason: stopReasons[expected.stop_reason]!,
  };
}

interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name: string; args?: Record<string, unknown> };
}

/**
 * The final message for a Gemini recording. Gemini has no block boundaries: consecutive thought
 * parts make one thinking block, consecutive answer parts one text block, each function call a
 * block of its own; a block keeps its last non-empty signature. Checked against the README's
 * `expected` (answer text, thought text length, calls, usage) before it is returned. Gemini
 * sends no call ids, so the adapter's ids are matched by pattern.
 */
export function expectedGeminiMessage(fixture: ProviderFixture): Omit<AssistantMessage, "timestamp"> {
  const content: Block[] = [];
  let open: TextContent | ThinkingContent | undefined;
  let finishReason = "";
  let usage: Record<string, number> = {};
  for (const chunk of fixture.chunks) {
    const candidate = (chunk["candidates"] as { content?: { parts?: GeminiPart[] }; finishReason?: string }[] | undefined)?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.text !== undefined) {
        const thinking = part.thought === true;
        if (open === undefined || (open.type === "thinking") !== thinking) {
          open = thinking ? { type: "thinking", thinking: "" } : { type: "text", text: "" };
          content.push(open);
        }
        if (open.type === "thinking") {
          open.thinking += part.text;
          if (part.thoughtSignature) open.thinkingSignature = part.thoughtSignature;
        } else {
          open.text += part.text;
          if (part.thoughtSignature) open.textSignature = part.thoughtSignature;
        }
      }
      if (part.functionCall) {
        open = undefined;
        const call: ToolCall = {
          type: "toolCall",
          id: expect.stringMatching(`^${part.functionCall.name}_\\d+_\\d+$`) as unknown as string,
          name: part.functionCall.name,
          arguments: part.functionCall.args ?? {},
        };
        if (part.thoughtSignature) call.thoughtSignature = part.thoughtSignature;
        content.push(call);
      }
    }
    if (candidate?.finishReason) finishReason = candidate.finishReason;
    if (chunk["usageMetadata"]) usage = chunk["usageMetadata"] as Record<string, number>;
  }
  const expected = fixture.expected as {
    text: string;
    thought_text_length: number;
    function_calls: { name: string; args: Record<string, unknown> }[];
    finishReason: string;
    usageMetadata: Record<string, number>;
    responseId: string;
  };
  const text = content.map((block) => (block.type === "text" ? block.text : "")).join("");
  const thoughts = content.map((block) => (block.type === "thinking" ? block.thinking : "")).join("");
  const calls = content.filter((block): block is ToolCall => block.type === "toolCall").map(({ name, arguments: args }) => ({ name, args }));
  if (text !== expected.text || thoughts.length !== expected.thought_text_length || JSON.stringify(calls) !== JSON.stringify(expected.function_calls)) {
    throw new Error("the Gemini accumulator disagrees with the README's expected message");
  }
  if (finishReason !== expected.finishReason || JSON.stringify(usage) !== JSON.stringify(expected.usageMetadata)) {
    throw new Error("the Gemini finish reason or usage disagrees with the README");
  }
  const cached = usage["cachedContentTokenCount"] ?? 0;
  const stopReason: StopReason = calls.length > 0 ? "toolUse" : finishReason === "STOP" ? "stop" : "length";
  return {
    role: "assistant",
    content,
    api: "google-generative-ai",
    provider: "google",
    model: fixture.model,
    responseId: expected.responseId,
    usage: usageOf(
      (usage["promptTokenCount"] ?? 0) - cached,
      (usage["candidatesTokenCount"] ?? 0) + (usage["thoughtsTokenCount"] ?? 0),
      cached,
      0,
      usage["totalTokenCount"] ?? 0,
    ),
    stopReason,
  };
}
