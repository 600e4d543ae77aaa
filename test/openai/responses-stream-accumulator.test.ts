import { describe, expect, it } from "vitest";
import { ResponsesStreamAccumulator, type ResponsesStreamEvent } from "../../src/openai/responses-stream-accumulator.js";
import { assertModelEventGrammar, finalMessage } from "../helpers/model-event-grammar.js";

describe("ResponsesStreamAccumulator", () => {
  // A message of "" ended the message with an empty errorMessage; one that is an object read "[object Object] (…)".
  it("reads an error's message and code only when they are text (or a number, for the code)", () => {
    const failed = (error: unknown) => {
      const accumulator = new ResponsesStreamAccumulator({ api: "openai-responses", provider: "openai", model: "m", timestamp: 1 });
      const events = accumulator.push({ type: "response.failed", response: { error } } as unknown as ResponsesStreamEvent);
      assertModelEventGrammar(events);
      return finalMessage(events).errorMessage;
    };
    expect([failed({ message: "", code: "" }), failed({ message: { a: 1 }, code: { b: 2 } }), failed({ message: "Overloaded", code: "server_error" }), failed(null)]).toStrictEqual([
      "The response failed",
      "The response failed",
      "Overloaded (server_error)",
      "The response failed",
    ]);
  });

  // As for Chat Completions: counts sent as strings or objects read NaN, and the Agent's totals became strings.
  it("reads usage counts that are not finite numbers as 0", () => {
    const accumulator = new ResponsesStreamAccumulator({ api: "openai-responses", provider: "openai", model: "m", timestamp: 1 });
    const completed = { type: "response.completed", response: { id: "r1", model: "m", usage: { input_tokens: "9", output_tokens: 4, total_tokens: null, input_tokens_details: { cached_tokens: {} } } } } as unknown as ResponsesStreamEvent;
    const events = [...accumulator.push(completed), ...accumulator.end()];
    assertModelEventGrammar(events);
    expect(finalMessage(events).usage).toMatchObject({ input: 0, output: 4, cacheRead: 0, totalTokens: 4 });
  });
});
