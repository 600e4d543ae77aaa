import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { cassetteRequestOf, redactCredentials, requestDifferences } from "../../src/testing/cassette-request.js";
import type { LlmContext } from "../../src/types.js";
import { assistantMessage, toolCall, userMessage } from "./fixtures.js";

const tools = [
  { name: "calculator", description: "Arithmetic", parameters: Type.Object({ expression: Type.String() }) },
  { name: "clock", description: "The time", parameters: Type.Object({}) },
];
const context: LlmContext = {
  systemPrompt: "Be brief.",
  messages: [
    userMessage("What is 12*7?", 1_700_000_000_000),
    assistantMessage([toolCall("call_1", "calculator", { expression: "12*7" })], { timestamp: 1_700_000_000_100 }),
    { role: "toolResult", toolCallId: "call_1", toolName: "calculator", content: [{ type: "text", text: "84" }], details: { steps: 3 }, isError: false, timestamp: 5 },
  ],
  tools,
};

describe("cassette requests", () => {
  it("keep what a provider sends: no timestamps, usage, details; tools as JSON schema", () => {
    expect(cassetteRequestOf(context)).toStrictEqual({
      systemPrompt: "Be brief.",
      messages: [
        { role: "user", content: "What is 12*7?" },
        { role: "assistant", content: [toolCall("call_1", "calculator", { expression: "12*7" })], stopReason: "toolUse" },
        { role: "toolResult", toolCallId: "call_1", toolName: "calculator", content: [{ type: "text", text: "84" }], isError: false },
      ],
      tools: [
        { name: "calculator", description: "Arithmetic", parameters: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] } },
        { name: "clock", description: "The time", parameters: { type: "object", properties: {} } },
      ],
    });
  });

  it("match when only timestamps and details differ", () => {
    const later: LlmContext = { ...context, messages: context.messages.map((message) => ({ ...message, timestamp: 0 })) };
    expect(requestDifferences(cassetteRequestOf(context), cassetteRequestOf(later))).toStrictEqual([]);
  });

  it("list each difference by path: a changed result, a missing message, a changed schema, a missing and a new tool", () => {
    const sent: LlmContext = {
      systemPrompt: "Be brief.",
      messages: [context.messages[0]!, context.messages[1]!],
      tools: [{ ...tools[0]!, parameters: Type.Object({ expression: Type.Number() }) }, { name: "weather", description: "Rain?", parameters: Type.Object({}) }],
    };
    expect(requestDifferences(cassetteRequestOf(context), cassetteRequestOf(sent))).toStrictEqual([
      'messages[2]: recorded "toolResult: 84", not sent',
      'tools["calculator"].parameters.properties.expression.type: recorded "string", sent "number"',
      'tools: "clock" recorded, not sent',
      'tools: "weather" sent, not recorded',
    ]);
  });

  it("show a long text around its first difference", () => {
    const long = `${"Lorem ipsum dolor sit amet. ".repeat(10)}Say yes.`;
    const recorded = cassetteRequestOf({ systemPrompt: long, messages: [] });
    const sent = cassetteRequestOf({ systemPrompt: long.replace("Say yes.", "Say no."), messages: [] });
    expect(requestDifferences(recorded, sent)).toStrictEqual(['systemPrompt: recorded …"sum dolor sit amet. Say yes.", sent …"sum dolor sit amet. Say no."']);
  });

  it("blank given secrets and credential-like strings wherever they are", () => {
    const value = {
      errorMessage: "401 Incorrect API key provided: sk-proj-********************************abcd. You can find your API key at https://platform.openai.com.",
      headers: ["Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature", "x-goog-api-key: AIzaSyA1234567890abcdefghijklmnopqrstuv"],
      note: "my-own-secret-token and sk-ant-api03-abcdefghijklmnop",
      count: 3,
    };
    expect(redactCredentials(value, ["my-own-secret-token"])).toStrictEqual({
      errorMessage: "401 Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com.",
      headers: ["Authorization: Bearer [redacted]", "x-goog-api-key: [redacted]"],
      note: "[redacted] and [redacted]",
      count: 3,
    });
  });
});
