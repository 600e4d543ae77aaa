import { expect } from "vitest";
import { openaiChat, openaiResponses } from "../../src/openai/index.js";
import type { OpenAIChatOptions, OpenAIResponsesOptions } from "../../src/openai/index.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { LlmContext, ModelEvent } from "../../src/types/model.js";
import { assertModelEventGrammar, collectModelEvents, finalMessage } from "./model-event-grammar.js";
import { loadFixture } from "./openai-fixtures.js";
import type { RecordedRequest } from "./sse-replay-server.js";
import { startReplayServer } from "./sse-replay-server.js";

export const helloContext: LlmContext = { messages: [{ role: "user", content: "Hello", timestamp: 1 }] };

/** Replays one fixture through the real SDK and a local server; checks the grammar. */
export async function runFixture(
  name: string,
  options: Partial<OpenAIChatOptions & OpenAIResponsesOptions> = {},
): Promise<{ events: ModelEvent[]; message: AssistantMessage; request: RecordedRequest }> {
  const fixture = loadFixture(name);
  const server = await startReplayServer([{ kind: "fixture", fixture }]);
  try {
    const settings = { model: "test-model", baseURL: server.baseURL, apiKey: "test-key", maxRetries: 0, ...options };
    const model = fixture.api === "responses" ? openaiResponses(settings) : openaiChat(settings);
    const { events, copies } = await collectModelEvents(model.stream(helloContext, { signal: new AbortController().signal }));
    assertModelEventGrammar(events, copies);
    const request = server.requests[0];
    if (!request) throw new Error("the server saw no request");
    return { events, message: finalMessage(events), request };
  } finally {
    await server.close();
  }
}

/** A long text: its length and how it starts and ends. */
export interface TextShape {
  length: number;
  startsWith: string;
  endsWith: string;
}

export type ExpectedBlock =
  | { text: string | TextShape; textSignature?: string }
  | { thinking: string | TextShape; signatureItemId?: string }
  | { toolCall: { id: string; name: string; arguments: Record<string, unknown> } };

export interface ExpectedMessage {
  stopReason: AssistantMessage["stopReason"];
  errorMessage?: string;
  content: ExpectedBlock[];
  /** input, output, cacheRead, totalTokens */
  usage: [number, number, number, number];
  responseId: string;
  responseModel: string;
}

function expectText(actual: string, expected: string | TextShape): void {
  if (typeof expected === "string") {
    expect(actual).toBe(expected);
    return;
  }
  expect(actual).toHaveLength(expected.length);
  expect(actual.startsWith(expected.startsWith), `starts with ${JSON.stringify(expected.startsWith)}`).toBe(true);
  expect(actual.endsWith(expected.endsWith), `ends with ${JSON.stringify(expected.endsWith)}`).toBe(true);
}

export function expectMessage(message: AssistantMessage, expected: ExpectedMessage): void {
  expect(message.stopReason).toBe(expected.stopReason);
  expect(message.errorMessage).toBe(expected.errorMessage);
  expect(message.content.map((block) => block.type)).toStrictEqual(
    expected.content.map((block) => ("text" in block ? "text" : "thinking" in block ? "thinking" : "toolCall")),
  );
  expected.content.forEach((expectedBlock, index) => {
    const block = message.content[index];
    if ("text" in expectedBlock && block?.type === "text") {
      expectText(block.text, expectedBlock.text);
      expect(block.textSignature).toBe(expectedBlock.textSignature);
    } else if ("thinking" in expectedBlock && block?.type === "thinking") {
      expectText(block.thinking, expectedBlock.thinking);
      if (expectedBlock.signatureItemId) {
        const item = JSON.parse(block.thinkingSignature ?? "{}") as { id?: string; type?: string; encrypted_content?: string };
        expect(item.type).toBe("reasoning");
        expect(item.id).toBe(expectedBlock.signatureItemId);
        expect(item.encrypted_content).toMatch(/^gAAAAA/);
      } else {
        expect(block.thinkingSignature).toBeUndefined();
      }
    } else if ("toolCall" in expectedBlock && block?.type === "toolCall") {
      expect(block).toStrictEqual({ type: "toolCall", ...expectedBlock.toolCall });
    }
  });
  const [input, output, cacheRead, totalTokens] = expected.usage;
  expect(message.usage).toStrictEqual({
    input,
    output,
    cacheRead,
    cacheWrite: 0,
    totalTokens,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  });
  expect(message.responseId).toBe(expected.responseId);
  expect(message.responseModel).toBe(expected.responseModel);
  expect(message.model).toBe("test-model");
  expect(message.provider).toBe("openai");
}

/** How many events of each type a stream had. */
export function countEvents(events: ModelEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of events) counts[event.type] = (counts[event.type] ?? 0) + 1;
  return counts;
}
