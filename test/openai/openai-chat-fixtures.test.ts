import { describe, expect, it } from "vitest";
import type { ExpectedMessage } from "../helpers/run-fixture.js";
import { countEvents, expectMessage, runFixture } from "../helpers/run-fixture.js";

const gpt4o = "gpt-4o-2024-08-06";

/** Every Chat Completions recording, with the message it must produce (values read off the chunks). */
const cases: Record<string, ExpectedMessage> = {
  "chat-text-usage-1": {
    stopReason: "stop",
    content: [
      {
        text: {
          length: 1724,
          startsWith: "**Holiday Name:** Harmony Day\n\n**Date:**",
          endsWith: "ed human experiences and mutual respect.",
        },
      },
    ],
    usage: [16, 300, 0, 316],
    responseId: "chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0",
    responseModel: "gpt-4.1-nano-2025-04-14",
  },
  "chat-text-usage-2": {
    stopReason: "stop",
    content: [
      {
        text: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
      },
    ],
    usage: [14, 30, 0, 44],
    responseId: "chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL",
    responseModel: gpt4o,
  },
  "chat-text-json-object-usage": {
    stopReason: "stop",
    content: [
      {
        text: {
          length: 608,
          startsWith: '\n  {\n    "location": "San Francisco, CA"',
          endsWith: '"condition": "Cloudy"\n      }\n    ]\n  }\n',
        },
      },
    ],
    usage: [19, 177, 0, 196],
    responseId: "chatcmpl-ABfwCjPMi0ubw56UyMIIeNfJzyogq",
    responseModel: gpt4o,
  },
  "chat-structured-output-usage": {
    stopReason: "stop",
    content: [{ text: '{"city":"San Francisco","temperature":61,"units":"f"}' }],
    usage: [79, 14, 0, 93],
    responseId: "chatcmpl-ABfw1e5abtU8OwGr15vOreYVb2MiF",
    responseModel: gpt4o,
  },
  "chat-structured-output-usage-node": {
    stopReason: "stop",
    content: [{ text: '{"city":"San Francisco","units":"c"}' }],
    usage: [17, 10, 0, 27],
    responseId: "chatcmpl-9tZXEmwtoDf6vqCqEWSvDP8jx9OXe",
    responseModel: gpt4o,
  },
  // n=3: only choice 0 is followed; the usage covers all three.
  "chat-multiple-choices-n3": {
    stopReason: "stop",
    content: [{ text: '{"city":"San Francisco","temperature":65,"units":"f"}' }],
    usage: [79, 42, 0, 121],
    responseId: "chatcmpl-ABfw2KKFuVXmEJgVwYfBvejMAdWtq",
    responseModel: gpt4o,
  },
  "chat-finish-length": {
    stopReason: "length",
    content: [{ text: '{"' }],
    usage: [79, 1, 0, 80],
    responseId: "chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh",
    responseModel: gpt4o,
  },
  // A refusal is the model's answer: streamed as text.
  "chat-refusal": {
    stopReason: "stop",
    content: [{ text: "I'm sorry, I can't assist with that request." }],
    usage: [79, 11, 0, 90],
    responseId: "chatcmpl-ABfw4IfQfCCrcuybFm41wJyxjbkz7",
    responseModel: gpt4o,
  },
  "chat-logprobs-content": {
    stopReason: "stop",
    content: [{ text: "Foo!" }],
    usage: [9, 2, 0, 11],
    responseId: "chatcmpl-ABfw5EzoqmfXjnnsXY7Yd8OC6tb3c",
    responseModel: gpt4o,
  },
  "chat-logprobs-refusal": {
    stopReason: "stop",
    content: [{ text: "I'm very sorry, but I can't assist with that." }],
    usage: [79, 12, 0, 91],
    responseId: "chatcmpl-ABfw5GEVqPbLY576l46FZDQoNJ2KC",
    responseModel: gpt4o,
  },
  "chat-tool-call-single-1": {
    stopReason: "toolUse",
    content: [
      {
        toolCall: {
          id: "call_c91SqDXlYFuETYv8mUHzz6pp",
          name: "GetWeatherArgs",
          arguments: { city: "Edinburgh", country: "UK", units: "c" },
        },
      },
    ],
    usage: [76, 24, 0, 100],
    responseId: "chatcmpl-ABfw8AOXnoa2kzy11vVTSjuQhHCQr",
    responseModel: gpt4o,
  },
  "chat-tool-call-single-2": {
    stopReason: "toolUse",
    content: [
      { toolCall: { id: "call_CTf1nWJLqSeRgDqaCG27xZ74", name: "get_weather", arguments: { city: "San Francisco", state: "CA" } } },
    ],
    usage: [48, 19, 0, 67],
    responseId: "chatcmpl-ABfwCgi41eStOcARjZq97ohCEGBPO",
    responseModel: gpt4o,
  },
  "chat-tool-call-single-3": {
    stopReason: "toolUse",
    content: [{ toolCall: { id: "call_4XzlGBLtUe9dy3GVNV4jhq7h", name: "get_weather", arguments: { city: "New York City" } } }],
    usage: [44, 16, 0, 60],
    responseId: "chatcmpl-ABfwERreu9s99xXsVuOWtIB2UOx62",
    responseModel: gpt4o,
  },
  "chat-parallel-tool-calls-1": {
    stopReason: "toolUse",
    content: [
      {
        toolCall: {
          id: "call_JMW1whyEaYG438VE1OIflxA2",
          name: "GetWeatherArgs",
          arguments: { city: "Edinburgh", country: "GB", units: "c" },
        },
      },
      {
        toolCall: {
          id: "call_DNYTawLBoN8fj3KN6qU9N1Ou",
          name: "get_stock_price",
          arguments: { ticker: "AAPL", exchange: "NASDAQ" },
        },
      },
    ],
    usage: [149, 60, 0, 209],
    responseId: "chatcmpl-ABfwAwrNePHUgBBezonVC6MX3zd63",
    responseModel: gpt4o,
  },
  // The same function twice, and no usage chunk at all.
  "chat-parallel-tool-calls-2": {
    stopReason: "toolUse",
    content: [
      { toolCall: { id: "call_cCPjAyfwTzboEKjVlqFrArNF", name: "get_current_weather", arguments: { location: "San Francisco" } } },
      { toolCall: { id: "call_Zi4He1Ns0mozwT6f85nW1BOW", name: "get_current_weather", arguments: { location: "Boston" } } },
    ],
    usage: [0, 0, 0, 0],
    responseId: "chatcmpl-9g58noIjRkOeNNxfFsFfcNjhXlul7",
    responseModel: "gpt-3.5-turbo-0125",
  },
  // The first chunk is Azure's prompt-filter chunk (empty id and model): ignored.
  "chat-azure-content-filter-1": {
    stopReason: "stop",
    content: [{ text: "Capital of Denmark." }],
    usage: [15, 78, 0, 93],
    responseId: "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt",
    responseModel: "gpt-5-nano-2025-08-07",
  },
  "chat-azure-content-filter-2": {
    stopReason: "stop",
    content: [
      { text: "Why did the Opentelemetry developer bring a ladder to the coding competition? \n\nBecause they wanted to reach new traces!" },
    ],
    usage: [0, 0, 0, 0],
    responseId: "chatcmpl-9HpbaAXyt0cAnlWvI8kUAFpZt5jyQ",
    responseModel: "gpt-35-turbo",
  },
};

describe("openaiChat replaying recorded OpenAI streams", () => {
  for (const [name, expected] of Object.entries(cases)) {
    it(`${name}: final message and event grammar`, async () => {
      const { message } = await runFixture(name);
      expectMessage(message, expected);
      expect(message.api).toBe("openai-completions");
    });
  }

  it("chat-tool-call-single-1: toolcall_delta partials carry the arguments parsed so far", async () => {
    const { events } = await runFixture("chat-tool-call-single-1");
    const progress = events.flatMap((event) =>
      event.type === "toolcall_delta" && event.partial.content[0]?.type === "toolCall"
        ? [[event.delta, event.partial.content[0].arguments]]
        : [],
    );
    expect(progress).toStrictEqual([
      ['{"', {}],
      ["city", {}],
      ['":"', { city: "" }],
      ["Ed", { city: "Ed" }],
      ["inburgh", { city: "Edinburgh" }],
      ['","', { city: "Edinburgh" }],
      ["country", { city: "Edinburgh" }],
      ['":"', { city: "Edinburgh", country: "" }],
      ["UK", { city: "Edinburgh", country: "UK" }],
      ['","', { city: "Edinburgh", country: "UK" }],
      ["units", { city: "Edinburgh", country: "UK" }],
      ['":"', { city: "Edinburgh", country: "UK", units: "" }],
      ["c", { city: "Edinburgh", country: "UK", units: "c" }],
      ['"}', { city: "Edinburgh", country: "UK", units: "c" }],
    ]);
  });

  it("chat-text-usage-1: one text block, one delta per content chunk", async () => {
    const { events } = await runFixture("chat-text-usage-1");
    expect(countEvents(events)).toStrictEqual({ start: 1, text_start: 1, text_delta: 300, text_end: 1, done: 1 });
  });

  it("chat-parallel-tool-calls-1: the first call ends when the second starts (its arguments are whole), the second at the finish", async () => {
    const { events } = await runFixture("chat-parallel-tool-calls-1");
    const shape = events.filter((event) => event.type !== "toolcall_delta").map((event) => [event.type, "contentIndex" in event ? event.contentIndex : -1]);
    expect(shape).toStrictEqual([
      ["start", -1],
      ["toolcall_start", 0],
      ["toolcall_end", 0],
      ["toolcall_start", 1],
      ["toolcall_end", 1],
      ["done", -1],
    ]);
  });

  it("sends stream: true with include_usage, and no usage options when turned off", async () => {
    const withUsage = await runFixture("chat-text-usage-2");
    expect(withUsage.request.url).toBe("/v1/chat/completions");
    expect(withUsage.request.body).toStrictEqual({
      model: "test-model",
      messages: [{ role: "user", content: "Hello" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const withoutUsage = await runFixture("chat-azure-content-filter-2", { includeUsage: false });
    expect(withoutUsage.request.body).toStrictEqual({
      model: "test-model",
      messages: [{ role: "user", content: "Hello" }],
      stream: true,
    });
  });
});
