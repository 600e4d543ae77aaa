import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { agentLoop, defineTool } from "../../src/index.js";
import { openaiChat } from "../../src/openai/index.js";
import type { AgentEvent, AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/index.js";
import { assertEventGrammar } from "../../src/testing/index.js";
import { loadFixture, type OpenAIFixture } from "../helpers/openai-fixtures.js";
import { startReplayServer, type ReplayServer } from "../helpers/sse-replay-server.js";

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * chat-tool-call-single-1 cut off after the `"UK` fragment, as a model hitting its token limit
 * in the middle of a tool call would send it: the finish chunk says "length", usage follows.
 */
function truncatedToolCall(): OpenAIFixture {
  const fixture = loadFixture("chat-tool-call-single-1");
  const finish = fixture.chunks[15] as { choices: { finish_reason: string }[] };
  const cutFinish = { ...finish, choices: [{ ...finish.choices[0], finish_reason: "length" }] };
  return { ...fixture, chunks: [...fixture.chunks.slice(0, 10), cutFinish, fixture.chunks[16]!] };
}

const weather = defineTool({
  name: "GetWeatherArgs",
  description: "Weather for a city",
  parameters: Type.Object({ city: Type.String(), country: Type.String(), units: Type.String() }),
  execute: () => {
    throw new Error("must not run with malformed arguments");
  },
});

describe("tool calls that cannot run, over real HTTP", () => {
  it("answers a tool call whose JSON was cut off by the token limit with an error result saying so, without running it", async () => {
    server = await startReplayServer([
      { kind: "fixture", fixture: truncatedToolCall() },
      { kind: "fixture", fixture: loadFixture("chat-text-usage-2") },
    ]);
    const model = openaiChat({ model: "gpt-4o", baseURL: server.baseURL, apiKey: "k" });
    const prompt: AgentMessage = { role: "user", content: "Weather in Edinburgh?", timestamp: 1 };
    const events: AgentEvent[] = await lastValueFrom(agentLoop([prompt], { messages: [], tools: [weather] }, { model }).pipe(toArray()));
    assertEventGrammar(events);

    const end = events[events.length - 1] as Extract<AgentEvent, { type: "agent_end" }>;
    const assistant = end.messages[1] as AssistantMessage;
    expect(assistant.stopReason).toBe("length");
    expect(assistant.content[0]).toMatchObject({ type: "toolCall", rawArguments: '{"city":"Edinburgh","country":"UK' });
    const result = end.messages[2] as ToolResultMessage;
    expect(result.isError).toBe(true);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toBe(
      'Tool call "GetWeatherArgs" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.',
    );
    expect(server.requests).toHaveLength(2);
  });

  it("does not send back the tool calls of an aborted assistant message", async () => {
    server = await startReplayServer([{ kind: "fixture", fixture: loadFixture("chat-text-usage-2") }]);
    const model = openaiChat({ model: "gpt-4o", baseURL: server.baseURL, apiKey: "k" });
    const aborted: AssistantMessage = {
      role: "assistant",
      content: [
        { type: "text", text: "Let me look" },
        { type: "toolCall", id: "call_never_ran", name: "GetWeatherArgs", arguments: { city: "Par" } },
      ],
      api: "openai-completions",
      provider: "openai",
      model: "gpt-4o",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "aborted",
      errorMessage: "Request was aborted",
      timestamp: 2,
    };
    const history: AgentMessage[] = [{ role: "user", content: "Weather?", timestamp: 1 }, aborted];
    await lastValueFrom(
      agentLoop([{ role: "user", content: "Never mind, say hi", timestamp: 3 }], { messages: history, tools: [weather] }, { model }).pipe(toArray()),
    );
    const body = server.requests[0]?.body as { messages: unknown[] };
    expect(body.messages).toStrictEqual([
      { role: "user", content: "Weather?" },
      { role: "assistant", content: "Let me look" },
      { role: "user", content: "Never mind, say hi" },
    ]);
  });
});
