import { describe, expect, it } from "vitest";
import { ResponsesStreamAccumulator, type ResponsesStreamEvent } from "../../src/openai/responses-stream-accumulator.js";
import { assertModelEventGrammar, finalMessage } from "../helpers/model-event-grammar.js";

describe("ResponsesStreamAccumulator", () => {
  // As for Chat Completions: counts sent as strings or objects read NaN, and the Agent's totals became strings.
  it("reads usage counts that are not finite numbers as 0", () => {
    const accumulator = new ResponsesStreamAccumulator({ api: "openai-responses", provider: "openai", model: "m", timestamp: 1 });
    const completed = { type: "response.completed", response: { id: "r1", model: "m", usage: { input_tokens: "9", output_tokens: 4, total_tokens: null, input_tokens_details: { cached_tokens: {} } } } } as unknown as ResponsesStreamEvent;
    const events = [...accumulator.push(completed), ...accumulator.end()];
    assertModelEventGrammar(events);
    expect(finalMessage(events).usage).toMatchObject({ input: 0, output: 4, cacheRead: 0, totalTokens: 4 });
  });
});
