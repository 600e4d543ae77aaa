import { Type } from "@sinclair/typebox";
import { lastValueFrom, tap, toArray } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { agentLoop, defineTool } from "../../src/index.js";
import { openaiChat, openaiResponses } from "../../src/openai/index.js";
import type { AgentEvent, AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/index.js";
import { loadFixture } from "../helpers/openai-fixtures.js";
import type { ReplayServer } from "../helpers/sse-replay-server.js";
import { startReplayServer } from "../helpers/sse-replay-server.js";

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function endMessages(events: AgentEvent[]): AgentMessage[] {
  const end = events[events.length - 1];
  if (end?.type !== "agent_end") throw new Error(`run did not end with agent_end (last: ${end?.type ?? "none"})`);
  return end.messages;
}

describe("agentLoop on the OpenAI provider (two turns over real HTTP)", () => {
  it("chat: tool call, tool result sent back with its id, then the answer", async () => {
    server = await startReplayServer([
      { kind: "fixture", fixture: loadFixture("chat-tool-call-single-1") },
      { kind: "fixture", fixture: loadFixture("chat-text-usage-2") },
    ]);
    const calls: unknown[] = [];
    const getWeather = defineTool({
      name: "GetWeatherArgs",
      description: "Weather for a city",
      parameters: Type.Object({ city: Type.String(), country: Type.String(), units: Type.Union([Type.Literal("c"), Type.Literal("f")]) }),
      execute: (_toolCallId, args) => {
        calls.push(args);
        return { content: [{ type: "text", text: `It is 12 degrees in ${args.city}.` }], details: { temperature: 12 } };
      },
    });
    const model = openaiChat({ model: "gpt-4o", baseURL: server.baseURL, apiKey: "k" });
    const prompt: AgentMessage = { role: "user", content: "Weather in Edinburgh?", timestamp: 1 };
    const events = await lastValueFrom(agentLoop([prompt], { systemPrompt: "Be brief.", messages: [], tools: [getWeather] }, { model }).pipe(toArray()));

    expect(calls).toStrictEqual([{ city: "Edinburgh", country: "UK", units: "c" }]);
    expect(server.requests).toHaveLength(2);
    const second = server.requests[1]?.body as { messages: unknown[]; tools: unknown[] };
    expect(second.messages).toStrictEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Edinburgh?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_c91SqDXlYFuETYv8mUHzz6pp", type: "function", function: { name: "GetWeatherArgs", arguments: '{"city":"Edinburgh","country":"UK","units":"c"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_c91SqDXlYFuETYv8mUHzz6pp", content: "It is 12 degrees in Edinburgh." },
    ]);
    expect(second.tools).toHaveLength(1);

    const messages = endMessages(events);
    expect(messages.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    const [, firstAnswer, toolResult, finalAnswer] = messages as [AgentMessage, AssistantMessage, ToolResultMessage, AssistantMessage];
    expect(firstAnswer).toMatchObject({ stopReason: "toolUse", content: [{ type: "toolCall", id: "call_c91SqDXlYFuETYv8mUHzz6pp" }] });
    expect(toolResult).toMatchObject({
      toolCallId: "call_c91SqDXlYFuETYv8mUHzz6pp",
      toolName: "GetWeatherArgs",
      isError: false,
      content: [{ type: "text", text: "It is 12 degrees in Edinburgh." }],
      details: { temperature: 12 },
    });
    expect(finalAnswer).toMatchObject({
      stopReason: "stop",
      api: "openai-completions",
      content: [
        {
          type: "text",
          text: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
        },
      ],
      usage: { input: 14, output: 30, totalTokens: 44 },
    });
    expect(events.filter((event) => event.type === "turn_end")).toHaveLength(2);
  });

  it("chat with eager tools: the first of two recorded parallel calls runs while the second still streams", async () => {
    server = await startReplayServer([
      { kind: "fixture", fixture: loadFixture("chat-parallel-tool-calls-1") },
      { kind: "fixture", fixture: loadFixture("chat-text-usage-2") },
    ]);
    const log: string[] = [];
    const record = (name: string) =>
      defineTool({
        name,
        description: name,
        parameters: Type.Object({}, { additionalProperties: true }),
        execute: () => {
          log.push(`execute ${name}`);
          return { content: [{ type: "text", text: "ok" }], details: {} };
        },
      });
    const model = openaiChat({ model: "gpt-4o", baseURL: server.baseURL, apiKey: "k" });
    const prompt: AgentMessage = { role: "user", content: "Weather and a stock price?", timestamp: 1 };
    const run = agentLoop([prompt], { systemPrompt: "", messages: [], tools: [record("GetWeatherArgs"), record("get_stock_price")] }, { model, eagerTools: true });
    const events = await lastValueFrom(
      run.pipe(
        tap((event) => {
          if (event.type === "message_update" && event.assistantMessageEvent.type.startsWith("toolcall_") && event.assistantMessageEvent.type !== "toolcall_delta") {
            log.push(`${event.assistantMessageEvent.type} ${(event.assistantMessageEvent as { contentIndex: number }).contentIndex}`);
          }
          if (event.type === "message_end" && event.message.role === "assistant") log.push("message_end");
        }),
        toArray(),
      ),
    );
    expect(log).toStrictEqual([
      "toolcall_start 0",
      "toolcall_end 0",
      "execute GetWeatherArgs",
      "toolcall_start 1",
      "toolcall_end 1",
      "execute get_stock_price",
      "message_end",
      "message_end",
    ]);
    expect(endMessages(events).map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
  });

  it("responses: function call, function_call_output with its call id, then the answer", async () => {
    server = await startReplayServer([
      { kind: "fixture", fixture: loadFixture("responses-function-call-1") },
      { kind: "fixture", fixture: loadFixture("responses-text-1") },
    ]);
    const getCapital = defineTool({
      name: "get_capital",
      description: "Capital of a country",
      parameters: Type.Object({ country: Type.String() }),
      execute: (_toolCallId, { country }) => ({ content: [{ type: "text", text: country === "France" ? "Paris" : "?" }], details: undefined }),
    });
    const model = openaiResponses({ model: "gpt-4o", baseURL: server.baseURL, apiKey: "k" });
    const prompt: AgentMessage = { role: "user", content: "Capital of France?", timestamp: 1 };
    const events = await lastValueFrom(agentLoop([prompt], { messages: [], tools: [getCapital] }, { model }).pipe(toArray()));

    const second = server.requests[1]?.body as { input: unknown[] };
    expect(second.input).toStrictEqual([
      { role: "user", content: "Capital of France?" },
      {
        type: "function_call",
        call_id: "call_kL0PCQV7M2WMoVX8V8OtYSAL",
        name: "get_capital",
        arguments: '{"country":"France"}',
        id: "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2",
      },
      { type: "function_call_output", call_id: "call_kL0PCQV7M2WMoVX8V8OtYSAL", output: "Paris" },
    ]);
    const messages = endMessages(events);
    expect(messages.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(messages[3]).toMatchObject({ stopReason: "stop", api: "openai-responses", content: [{ type: "text", text: "2 + 2 equals 4." }] });
  });
});
