import { describe, expect, it } from "vitest";
import type { ExpectedMessage } from "../helpers/run-fixture.js";
import { countEvents, expectMessage, runFixture } from "../helpers/run-fixture.js";

/** Recordings from OpenAI-compatible servers, each with its own quirk (see the fixtures README). */
const cases: Record<string, ExpectedMessage> = {
  // reasoning_content, then content; usage on the finish chunk.
  "compat-deepseek-reasoning": {
    stopReason: "stop",
    content: [
      {
        thinking: {
          length: 606,
          startsWith: "We need to count the number of the lette",
          endsWith: "nd 9. So yes, 3.\n\nThus, the answer is 3.",
        },
      },
      { text: 'The word "strawberry" contains three "r"s.' },
    ],
    usage: [18, 219, 0, 237],
    responseId: "cac7192e-e619-40c6-96b0-ed4276bc03ac",
    responseModel: "deepseek-reasoner",
  },
  // Cached prompt tokens are cacheRead, not input.
  "compat-deepseek-reasoning-tool-call": {
    stopReason: "toolUse",
    content: [
      {
        thinking:
          'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".',
      },
      { toolCall: { id: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", name: "weather", arguments: { location: "San Francisco" } } },
    ],
    usage: [19, 83, 320, 422],
    responseId: "cca85624-4056-401f-b220-d77601d1f70d",
    responseModel: "deepseek-reasoner",
  },
  "compat-deepseek-finish-length": {
    stopReason: "length",
    content: [
      {
        text: {
          length: 1855,
          startsWith: "## **Holiday Name:** Starlight Remembran",
          endsWith: " observe 15 minutes of silent looking at",
        },
      },
    ],
    usage: [13, 400, 0, 413],
    responseId: "f6117a0b-129d-46fa-b239-78f01c2c5df9",
    responseModel: "deepseek-chat",
  },
  // The whole call in one delta; xAI leaves reasoning tokens out of completion_tokens.
  "compat-xai-reasoning-tool-call": {
    stopReason: "toolUse",
    content: [
      {
        thinking: {
          length: 1069,
          startsWith: "First, the user is asking about the weat",
          endsWith: " for now, this is the logical next step.",
        },
      },
      { toolCall: { id: "call_79382389", name: "weather", arguments: { location: "San Francisco" } } },
    ],
    usage: [1, 253, 306, 560],
    responseId: "7027d986-3c59-a37a-9a5f-50713e01c8a6",
    responseModel: "grok-3-mini",
  },
  "compat-groq-tool-call": {
    stopReason: "toolUse",
    content: [{ toolCall: { id: "tk85n1k4m", name: "weather", arguments: {} } }],
    usage: [210, 15, 0, 225],
    responseId: "chatcmpl-b610d559-f156-4aca-8827-24b4fe6af54f",
    responseModel: "llama-3.3-70b-versatile",
  },
  // `delta.reasoning` (not reasoning_content).
  "compat-groq-reasoning-tool-call": {
    stopReason: "toolUse",
    content: [
      { thinking: 'We need to call the function with correct parameter "name". Provide a name, e.g., "example".' },
      { toolCall: { id: "fc_bfb39741-3748-4def-9886-a93fc9c64a90", name: "get_something_by_name", arguments: { name: "example" } } },
    ],
    usage: [304, 49, 0, 353],
    responseId: "chatcmpl-e35442a8-12c0-4fb4-8be4-0e51727ce7b7",
    responseModel: "openai/gpt-oss-120b",
  },
  // `event: error` frame after 93 reasoning deltas, no [DONE].
  "compat-groq-error-midstream": {
    stopReason: "error",
    errorMessage:
      "Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema: errors: [missing properties: 'name', additionalProperties 'invalid_param' not allowed] (tool_use_failed)",
    content: [
      {
        thinking: {
          length: 412,
          startsWith: "We need to call the tool with invalid pa",
          endsWith: 'd call with name: "test". Let\'s do that.',
        },
      },
    ],
    usage: [0, 0, 0, 0],
    responseId: "chatcmpl-4f39f3af-3267-4ac1-a0cf-6aa7451877dc",
    responseModel: "openai/gpt-oss-120b",
  },
  // finish_reason "length" twice, then a chunk with a top-level error object: the error wins.
  "compat-openrouter-error-midstream": {
    stopReason: "error",
    errorMessage: "Token limit reached",
    content: [{ thinking: "We need to respond to a greeting. The user" }],
    usage: [0, 0, 0, 0],
    responseId: "gen-1762179802-UN8pkJI4AGZvryk0kFnb",
    responseModel: "minimax/minimax-m2:free",
  },
  // Usage on a separate chunk after the finish chunk (choices not empty).
  "compat-openrouter-reasoning": {
    stopReason: "stop",
    content: [{ thinking: "This is a simple arithmetic question. 2+2 equals 4." }, { text: "2 + 2 = 4" }],
    usage: [43, 36, 0, 79],
    responseId: "gen-1765226419-AGrwjunAftQIAgweibL8",
    responseModel: "anthropic/claude-sonnet-4.5",
  },
  // role repeated on every delta, no finish_reason key until the end.
  "compat-zai-reasoning": {
    stopReason: "stop",
    content: [
      {
        thinking: {
          length: 2173,
          startsWith: "\n1.  **Analyze the User's Request:** The",
          endsWith: '\n\n7.  **Draft the final response:** "4".',
        },
      },
      { text: "4" },
    ],
    usage: [13, 564, 0, 577],
    responseId: "202607010739425543ff9439144b2c",
    responseModel: "glm-4.7",
  },
  // Continuation deltas repeat `"id": ""`: the first id must survive.
  "compat-qwen-tool-call-empty-ids": {
    stopReason: "toolUse",
    content: [{ toolCall: { id: "call_eee11723464a4b9eb8cee71d", name: "weather", arguments: { location: "San Francisco" } } }],
    usage: [295, 22, 0, 317],
    responseId: "chatcmpl-8e243c57-23b3-9db2-a02e-e3c53929c368",
    responseModel: "qwen3-max",
  },
  // No `index`, no `type`; finish and usage on the same chunk.
  "compat-mistral-tool-call-no-index": {
    stopReason: "toolUse",
    content: [{ toolCall: { id: "gSIMJiOkT", name: "weather", arguments: { location: "San Francisco" } } }],
    usage: [124, 22, 0, 146],
    responseId: "b3999b8c93e04e11bcbff7bcab829667",
    responseModel: "mistral-small-latest",
  },
  // Last content and finish_reason "length" on the same chunk; no usage.
  "compat-vllm-finish-length": {
    stopReason: "length",
    content: [{ text: "<|im_end|>doctor\n<|im_end|>supervisor\n<" }],
    usage: [0, 0, 0, 0],
    responseId: "chat-22c24755532348e6b6ff75297b1a71b3",
    responseModel: "facebook/opt-125m",
  },
};

describe("openaiChat replaying streams of OpenAI-compatible servers", () => {
  for (const [name, expected] of Object.entries(cases)) {
    it(`${name}: final message and event grammar`, async () => {
      const { message } = await runFixture(name);
      expectMessage(message, expected);
    });
  }

  it("compat-qwen-tool-call-empty-ids: every partial keeps the real id", async () => {
    const { events } = await runFixture("compat-qwen-tool-call-empty-ids");
    const ids = events.flatMap((event) =>
      event.type === "toolcall_delta" && event.partial.content[0]?.type === "toolCall" ? [event.partial.content[0].id] : [],
    );
    expect(ids).toStrictEqual(["call_eee11723464a4b9eb8cee71d", "call_eee11723464a4b9eb8cee71d"]);
  });

  it("compat-deepseek-reasoning: thinking closes before text opens", async () => {
    const { events } = await runFixture("compat-deepseek-reasoning");
    expect(countEvents(events)).toMatchObject({ thinking_start: 1, thinking_end: 1, text_start: 1, text_end: 1, done: 1 });
    const order = events.filter((event) => /_(start|end)$/.test(event.type)).map((event) => event.type);
    expect(order).toStrictEqual(["thinking_start", "thinking_end", "text_start", "text_end"]);
  });

  it("compat-groq-error-midstream: the error event keeps the reasoning streamed so far", async () => {
    const { events } = await runFixture("compat-groq-error-midstream");
    expect(countEvents(events)).toStrictEqual({ start: 1, thinking_start: 1, thinking_delta: 93, error: 1 });
    expect(events[events.length - 1]).toMatchObject({ type: "error", reason: "error" });
  });
});
