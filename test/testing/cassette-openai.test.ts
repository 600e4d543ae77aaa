import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Type } from "@sinclair/typebox";
import { lastValueFrom, map, tap, toArray } from "rxjs";
import { beforeAll, describe, expect, it } from "vitest";
import { agentLoop, defineTool } from "../../src/index.js";
import type { AgentEvent, AgentMessage, AssistantMessage, Model } from "../../src/index.js";
import { openaiChat } from "../../src/openai/index.js";
import { type Cassette, cassetteModel, recordingModel } from "../../src/testing/index.js";
import { cassetteFileSink, readCassette, writeCassette } from "../../src/testing/node/index.js";
import { marbles } from "../helpers/marbles.js";
import { loadFixture } from "../helpers/openai-fixtures.js";
import { startReplayServer } from "../helpers/sse-replay-server.js";

const tools = [
  defineTool({
    name: "GetWeatherArgs",
    description: "Weather for a city",
    parameters: Type.Object({ city: Type.String(), country: Type.String(), units: Type.Union([Type.Literal("c"), Type.Literal("f")]) }),
    execute: (_toolCallId, args) => ({ content: [{ type: "text", text: `12 degrees in ${args.city}.` }], details: undefined }),
  }),
  defineTool({
    name: "get_stock_price",
    description: "A share price",
    parameters: Type.Object({ ticker: Type.String(), exchange: Type.String() }),
    execute: (_toolCallId, args) => ({ content: [{ type: "text", text: `${args.ticker} is at 190.` }], details: undefined }),
  }),
];
const prompt: AgentMessage = { role: "user", content: "Weather in Edinburgh, and the AAPL price?", timestamp: 1 };
const context = () => ({ systemPrompt: "Be brief.", messages: [], tools });
const json = <Value>(value: Value): Value => JSON.parse(JSON.stringify(value)) as Value;

/** Counts the events a model emitted, so each agent event can be placed after the model event it followed. */
function counted(model: Model, counter: { events: number }): Model {
  return { ...model, stream: (llmContext, options) => model.stream(llmContext, options).pipe(tap(() => (counter.events += 1))) };
}

interface Recording {
  cassette: Cassette;
  fileText: string;
  /** The live run's events, each with how many model events had come before it. */
  events: { afterModelEvents: number; event: AgentEvent }[];
  authorization: (string | undefined)[];
}

const apiKey = "sk-test-CASSETTE-0123456789abcdef";

async function recordLiveRun(): Promise<Recording> {
  const server = await startReplayServer([
    { kind: "fixture", fixture: loadFixture("chat-parallel-tool-calls-1") },
    { kind: "fixture", fixture: loadFixture("chat-text-usage-2") },
  ]);
  const file = path.join(mkdtempSync(path.join(tmpdir(), "rxagent-cassette-")), "run.cassette.jsonl");
  const sink = cassetteFileSink(file);
  try {
    const recorder = recordingModel(openaiChat({ model: "gpt-4o", baseURL: server.baseURL, apiKey, maxRetries: 0 }), { sink });
    const counter = { events: 0 };
    const events = await lastValueFrom(
      agentLoop([prompt], context(), { model: counted(recorder, counter) }).pipe(
        map((event) => ({ afterModelEvents: counter.events, event })),
        toArray(),
      ),
    );
    expect(readCassette(file)).toStrictEqual(json(recorder.cassette));
    // Written at the end, the same cassette reads the same line for line as the streamed file.
    const written = `${file}.written`;
    writeCassette(written, recorder.cassette);
    expect(readFileSync(written, "utf8")).toBe(readFileSync(file, "utf8"));
    return { cassette: recorder.cassette, fileText: readFileSync(file, "utf8"), events, authorization: server.requests.map((request) => request.headers.authorization) };
  } finally {
    sink.close();
    await server.close();
  }
}

describe("a cassette recorded from the OpenAI provider over real HTTP", () => {
  let recording: Recording;
  beforeAll(async () => {
    recording = await recordLiveRun();
  });

  it("holds both calls: the request each time, and the parallel tool calls then the answer", () => {
    const { cassette } = recording;
    expect(cassette.model).toStrictEqual({ id: "gpt-4o", provider: "openai", api: "openai-completions" });
    expect(cassette.calls.map((call) => call.request.messages.map((message) => message.role))).toStrictEqual([["user"], ["user", "assistant", "toolResult", "toolResult"]]);
    expect(cassette.calls[1]!.request.messages.slice(2)).toStrictEqual([
      { role: "toolResult", toolCallId: "call_JMW1whyEaYG438VE1OIflxA2", toolName: "GetWeatherArgs", content: [{ type: "text", text: "12 degrees in Edinburgh." }], isError: false },
      { role: "toolResult", toolCallId: "call_DNYTawLBoN8fj3KN6qU9N1Ou", toolName: "get_stock_price", content: [{ type: "text", text: "AAPL is at 190." }], isError: false },
    ]);
    expect(cassette.calls.map((call) => call.request.tools?.map((tool) => tool.name))).toStrictEqual([
      ["GetWeatherArgs", "get_stock_price"],
      ["GetWeatherArgs", "get_stock_price"],
    ]);
    expect(cassette.calls.map((call) => call.events.at(-1)?.event)).toStrictEqual([
      { type: "done", reason: "toolUse" },
      { type: "done", reason: "stop" },
    ]);
    for (const call of cassette.calls) {
      const times = call.events.map((event) => event.at);
      expect(times).toStrictEqual([...times].sort((left, right) => left - right));
    }
  });

  it("never holds the API key the provider sent", () => {
    expect(recording.authorization).toStrictEqual([`Bearer ${apiKey}`, `Bearer ${apiKey}`]);
    expect(recording.fileText).not.toContain(apiKey);
    expect(recording.fileText).not.toContain("CASSETTE-0123456789");
    expect(recording.fileText.toLowerCase()).not.toContain("authorization");
  });

  it(
    "replays in virtual time: the same events, each at the recorded time after its call started",
    marbles((m) => {
      const { cassette, events } = recording;
      // Call n starts when call n-1 ended (the tools answer at once), so model event i plays at
      // the end of the earlier calls plus its own recorded time.
      const modelEventFrames: number[] = [];
      let callStart = 0;
      for (const call of cassette.calls) {
        for (const event of call.events) modelEventFrames.push(callStart + event.at);
        callStart += call.events.at(-1)?.at ?? 0;
      }
      const toolResultFrame = cassette.calls[0]!.events.at(-1)!.at;
      const expected = events.map(({ afterModelEvents, event }) => [
        afterModelEvents === 0 ? 0 : modelEventFrames[afterModelEvents - 1],
        withToolResultTime(json(event), toolResultFrame),
      ]);

      const replayed: [number, AgentEvent][] = [];
      const model = cassetteModel(cassette, { scheduler: m.scheduler });
      agentLoop([prompt], context(), { model, scheduler: m.scheduler }).subscribe((event) => replayed.push([m.scheduler.now(), json(event)]));
      m.flush();
      expect(replayed).toStrictEqual(expected);
      expect(replayed.map(([, event]) => event.type).filter((type) => type === "tool_execution_end")).toHaveLength(2);
      const answer = (replayed.at(-1)![1] as Extract<AgentEvent, { type: "agent_end" }>).messages.at(-1) as AssistantMessage;
      expect(answer.content).toStrictEqual([
        { type: "text", text: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app." },
      ]);
    }),
  );

  it(
    "ends the run with the differences as an error message when the prompt changes",
    marbles((m) => {
      const model = cassetteModel(recording.cassette, { scheduler: m.scheduler, speed: Infinity });
      const changed: AgentMessage = { role: "user", content: "Weather in Glasgow, and the AAPL price?", timestamp: 1 };
      const ends: AssistantMessage[] = [];
      agentLoop([changed], context(), { model, scheduler: m.scheduler }).subscribe((event) => {
        if (event.type === "turn_end") ends.push(event.message as AssistantMessage);
      });
      m.flush();
      expect(ends.map((message) => [message.stopReason, message.errorMessage])).toStrictEqual([
        ["error", 'cassetteModel: call #1 differs from the recording:\n- messages[0].content: recorded "Weather in Edinburgh, and the AAPL price?", sent "Weather in Glasgow, and the AAPL price?"'],
      ]);
    }),
  );
});

describe("recording a provider that failed on the key", () => {
  it("blanks the key the server quoted back, as a credential pattern and as a given secret", async () => {
    const plainKey = "team-key-9f8e7d6c5b4a";
    const unauthorized = (key: string) => ({
      kind: "http-error" as const,
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`, code: "invalid_api_key" } },
    });
    const server = await startReplayServer([unauthorized(apiKey), unauthorized(plainKey)]);
    try {
      const record = async (key: string) => {
        const recorder = recordingModel(openaiChat({ model: "gpt-4o", baseURL: server.baseURL, apiKey: key, maxRetries: 0 }), { secrets: [plainKey] });
        await lastValueFrom(recorder.stream({ messages: [prompt as Extract<AgentMessage, { role: "user" }>] }, { signal: new AbortController().signal }));
        return recorder.cassette;
      };
      const cassettes = [await record(apiKey), await record(plainKey)];
      const errors = cassettes.map((cassette) => cassette.calls[0]!.events.at(-1)!.changes?.set?.["errorMessage"]);
      expect(errors).toStrictEqual([
        "401 Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.",
        "401 Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.",
      ]);
      const text = JSON.stringify(cassettes);
      expect(text).not.toContain(apiKey);
      expect(text).not.toContain(plainKey);
    } finally {
      await server.close();
    }
  });
});

/** The live run's tool results carry wall-clock timestamps; in the replay they carry the virtual time. */
function withToolResultTime(event: AgentEvent, frame: number): AgentEvent {
  const retime = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(retime);
    if (value === null || typeof value !== "object") return value;
    const entries = Object.entries(value).map(([key, field]) => [key, retime(field)]);
    const object = Object.fromEntries(entries) as Record<string, unknown>;
    if (object["role"] === "toolResult") object["timestamp"] = frame;
    return object;
  };
  return retime(event) as AgentEvent;
}
