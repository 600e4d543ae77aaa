import { describe, expect, it } from "vitest";
import type { ExpectedMessage } from "../helpers/run-fixture.js";
import { countEvents, expectMessage, runFixture } from "../helpers/run-fixture.js";

const cases: Record<string, ExpectedMessage> = {
  "responses-text-1": {
    stopReason: "stop",
    content: [{ text: "2 + 2 equals 4.", textSignature: "msg_087a1bffb8180cc40069120650b3e08196921c90ad59e694eb" }],
    usage: [14, 9, 0, 23],
    responseId: "resp_087a1bffb8180cc4006912065042e08196a1a6445d62480120",
    responseModel: "gpt-4.1-nano-2025-04-14",
  },
  // Early-2025 recording without sequence_number.
  "responses-function-call-1": {
    stopReason: "toolUse",
    content: [
      {
        toolCall: {
          id: "call_kL0PCQV7M2WMoVX8V8OtYSAL|fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2",
          name: "get_capital",
          arguments: { country: "France" },
        },
      },
    ],
    usage: [255, 16, 0, 271],
    responseId: "resp_67e554a155508191900ee113293c4c830794405d35281ae2",
    responseModel: "gpt-4o-2024-08-06",
  },
  "responses-function-call-long-args": {
    stopReason: "toolUse",
    content: [
      {
        toolCall: {
          id: "call_n4VXBX0G09FeO0l5OefSd4Ds|fc_689f74ebd4448196adc30eee354c6aa405e045a92c8fd6eb",
          name: "plan_and_apply_recipe_modifications",
          arguments: {
            recipe: {
              id: "spaghetti_carbonara",
              name: "Spaghetti Carbonara",
              ingredients: [
                "400g spaghetti",
                "200g pancetta or guanciale",
                "4 large eggs",
                "100g Pecorino Romano cheese, grated",
                "2 cloves garlic",
                "Black pepper",
                "Salt",
              ],
              instructions: [
                "Cook spaghetti in salted boiling water until al dente",
                "Dice pancetta and cook in a large pan until crispy",
                "Whisk eggs with grated cheese and black pepper",
                "Drain pasta, reserving 1 cup pasta water",
                "Add hot pasta to the pan with pancetta",
                "Remove from heat, add egg mixture, toss quickly",
                "Add pasta water if needed to create creamy sauce",
                "Serve immediately with extra cheese",
              ],
              prep_time: "10 minutes",
              cook_time: "15 minutes",
              servings: 4,
            },
            modification_request: "Make it vegetarian",
          },
        },
      },
    ],
    usage: [534, 180, 0, 714],
    responseId: "resp_689f74eb61288196b0fcb24ca21a7ffc05e045a92c8fd6eb",
    responseModel: "gpt-4o-2024-08-06",
  },
  // Encrypted reasoning with an empty summary: an empty thinking block that carries the item.
  "responses-reasoning-function-call": {
    stopReason: "toolUse",
    content: [
      { thinking: "", signatureItemId: "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405" },
      {
        toolCall: {
          id: "call_CWXgs68YprAjp6t0371hiPOI|fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042",
          name: "final_result",
          arguments: { result: 6666 },
        },
      },
    ],
    usage: [53, 469, 0, 522],
    responseId: "resp_0050471a34b36ae60068c97b94a480819587a9d70cf2979b33",
    responseModel: "gpt-5-2025-08-07",
  },
  "responses-reasoning-text-function-call": {
    stopReason: "toolUse",
    content: [
      { thinking: "", signatureItemId: "rs_0fabc13af1ee0049006a691dfe60b081a1baa444d3cf19afba" },
      {
        text: "I\u2019ll check the capital lookup tool for \u201cPotatoLand.\u201d",
        textSignature: "msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce",
      },
      {
        toolCall: {
          id: "call_LabG58Uhrq9kZvR52BYKjToD|fc_0fabc13af1ee0049006a691dff0c1481a1b4a0eec7e3c753bb",
          name: "get_capital",
          arguments: { country: "PotatoLand" },
        },
      },
    ],
    usage: [63, 69, 0, 132],
    responseId: "resp_0fabc13af1ee0049006a691dfdab8881a1a75f2db7ff78cb83",
    responseModel: "gpt-5.5-2026-04-23",
  },
  // Four summary parts joined by blank lines.
  "responses-reasoning-summary": {
    stopReason: "stop",
    content: [
      {
        thinking: {
          length: 2028,
          startsWith: "**Providing street crossing instructions",
          endsWith: "It will be clear and easy to understand!",
        },
        signatureItemId: "rs_68c42d1d0878819d8266007cd3d1402c08fbf9b1584184ff",
      },
      {
        text: {
          length: 1251,
          startsWith: "I'm not a road safety professional, but ",
          endsWith: " rules specific to your area. Stay safe!",
        },
        textSignature: "msg_68c42d26866c819da8d5c606621c911608fbf9b1584184ff",
      },
    ],
    usage: [13, 1680, 0, 1693],
    responseId: "resp_68c42d0fb418819dbfa579f69406b49508fbf9b1584184ff",
    responseModel: "o3-mini-2025-01-31",
  },
  "responses-error": {
    stopReason: "error",
    errorMessage:
      "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors. (insufficient_quota)",
    content: [],
    usage: [0, 0, 0, 0],
    responseId: "resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424",
    responseModel: "gpt-5-nano-2025-08-07",
  },
};

describe("openaiResponses replaying recorded Responses API streams", () => {
  for (const [name, expected] of Object.entries(cases)) {
    it(`${name}: final message and event grammar`, async () => {
      const { message, request } = await runFixture(name);
      expectMessage(message, expected);
      expect(message.api).toBe("openai-responses");
      expect(request.url).toBe("/v1/responses");
    });
  }

  it("responses-reasoning-summary: summary parts are separated by a blank line delta", async () => {
    const { events, message } = await runFixture("responses-reasoning-summary");
    const separators = events.filter((event) => event.type === "thinking_delta" && event.delta === "\n\n");
    expect(separators).toHaveLength(3);
    expect(countEvents(events)).toStrictEqual({
      start: 1,
      thinking_start: 1,
      thinking_delta: 383 + 3,
      thinking_end: 1,
      text_start: 1,
      text_delta: 271,
      text_end: 1,
      done: 1,
    });
    const thinking = message.content[0];
    expect(thinking?.type === "thinking" && thinking.thinking.split("\n\n**")).toHaveLength(4);
  });

  it("responses-function-call-long-args: 166 argument deltas, partial arguments grow", async () => {
    const { events } = await runFixture("responses-function-call-long-args");
    const deltas = events.filter((event) => event.type === "toolcall_delta");
    expect(deltas).toHaveLength(166);
    const sizes = deltas.map((event) => JSON.stringify(event.partial.content[0]?.type === "toolCall" ? event.partial.content[0].arguments : null).length);
    expect(sizes.every((size, index) => index === 0 || size >= sizes[index - 1]!)).toBe(true);
    expect(deltas[40]?.partial.content[0]).toMatchObject({ arguments: { recipe: { id: "spaghetti_carbonara" } } });
  });

  it("sends stream: true, store: false and the prompt as input", async () => {
    const { request } = await runFixture("responses-text-1");
    expect(request.body).toStrictEqual({
      model: "test-model",
      input: [{ role: "user", content: "Hello" }],
      stream: true,
      store: false,
    });
  });
});
