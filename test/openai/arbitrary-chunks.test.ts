/**
 * Whatever an OpenAI-compatible server streams (a proxy, a local server, a server of one's own:
 * the SDK parses each chunk's JSON and checks nothing), the run ends as data: no Observable
 * error, a well-formed event sequence ending in `agent_end`, one result per tool call of every
 * final message, usage of finite numbers, and an `errorMessage` that is text.
 */
import { Type } from "@sinclair/typebox";
import fc from "fast-check";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { openaiChat, openaiResponses } from "../../src/openai/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, Model } from "../../src/types.js";
import { expectOneResultPerToolCall, userMessage } from "../testing/fixtures.js";

const junk = fc.oneof(fc.constant(null), fc.constant(undefined), fc.integer(), fc.double(), fc.string({ maxLength: 4 }), fc.boolean(), fc.constant({}), fc.constant([]));
/** Mostly `arbitrary`, sometimes a value of another type. */
const maybe = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 4, arbitrary }, { weight: 1, arbitrary: junk });
const index = fc.oneof(fc.nat(3), fc.constantFrom(1e9, -1, 2 ** 31, 0.5));
const argumentText = fc.oneof(fc.constantFrom("{", '"n"', ":", "1", "}", '{"n":1}', "", "]", '"', "[".repeat(300)), fc.string({ maxLength: 6 }));
const name = fc.constantFrom("work", "nope", "");

const chatToolCall = fc.record(
  { index: maybe(index), id: maybe(fc.constantFrom("c1", "c2", "")), type: maybe(fc.constant("function")), function: maybe(fc.record({ name: maybe(name), arguments: maybe(argumentText) }, { requiredKeys: [] })) },
  { requiredKeys: [] },
);
const chatDelta = fc.record(
  {
    role: maybe(fc.constant("assistant")),
    content: maybe(fc.string({ maxLength: 4 })),
    reasoning_content: maybe(fc.string({ maxLength: 4 })),
    refusal: maybe(fc.string({ maxLength: 4 })),
    tool_calls: maybe(fc.array(maybe(chatToolCall), { maxLength: 2 })),
  },
  { requiredKeys: [] },
);
const chatChoice = fc.record(
  { index: maybe(fc.constantFrom(0, 1)), delta: maybe(chatDelta), finish_reason: maybe(fc.constantFrom("stop", "length", "tool_calls", "content_filter", "function_call", null)) },
  { requiredKeys: [] },
);
const chatUsage = fc.record(
  { prompt_tokens: maybe(fc.nat(100)), completion_tokens: maybe(fc.nat(100)), total_tokens: maybe(fc.nat(200)), prompt_tokens_details: maybe(fc.record({ cached_tokens: maybe(fc.nat(10)) })) },
  { requiredKeys: [] },
);
/** A call to the tool as a server sends it whole, so that some runs reach the tool. */
const wholeChatCall = fc.constantFrom("c1", "c2").map((id) => ({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id, type: "function", function: { name: "work", arguments: '{"n":1}' } }] } }] }));
const chatChunk = fc.oneof(
  { weight: 1, arbitrary: wholeChatCall },
  {
    weight: 8,
    arbitrary: fc.record(
      { id: maybe(fc.constant("x")), model: maybe(fc.constant("m")), choices: maybe(fc.array(maybe(chatChoice), { maxLength: 2 })), usage: maybe(chatUsage), error: maybe(fc.record({ message: maybe(fc.string({ maxLength: 4 })) })) },
      { requiredKeys: ["choices"] },
    ),
  },
  { weight: 1, arbitrary: junk },
);

const responsesItem = fc.record(
  { type: maybe(fc.constantFrom("message", "function_call", "reasoning", "web_search_call")), id: maybe(fc.constantFrom("i1", "i2")), call_id: maybe(fc.constantFrom("c1", "c2", "")), name: maybe(name), arguments: maybe(argumentText), content: maybe(fc.array(maybe(fc.record({ type: maybe(fc.constant("output_text")), text: maybe(fc.string({ maxLength: 4 })) })), { maxLength: 2 })) },
  { requiredKeys: [] },
);
const responsesResponse = fc.record(
  { id: maybe(fc.constant("r1")), model: maybe(fc.constant("m")), usage: maybe(fc.record({ input_tokens: maybe(fc.nat(100)), output_tokens: maybe(fc.nat(100)), total_tokens: maybe(fc.nat(200)) }, { requiredKeys: [] })), incomplete_details: maybe(fc.record({ reason: maybe(fc.constantFrom("max_output_tokens", "content_filter")) })), error: maybe(fc.record({ message: maybe(fc.string({ maxLength: 4 })), code: maybe(fc.string({ maxLength: 4 })) })) },
  { requiredKeys: [] },
);
/** A call to the tool as a server sends it whole, so that some runs reach the tool. */
const wholeResponsesCall = fc.constantFrom("c1", "c2").map((id) => ({ type: "response.output_item.done", output_index: 0, item: { type: "function_call", id: "i1", call_id: id, name: "work", arguments: '{"n":1}' } }));
const responsesEvent = fc.oneof(
  { weight: 1, arbitrary: wholeResponsesCall },
  {
    weight: 8,
    arbitrary: fc.record(
    {
      type: maybe(
        fc.constantFrom(
          "response.created",
          "response.output_item.added",
          "response.output_text.delta",
          "response.reasoning_summary_text.delta",
          "response.reasoning_summary_part.added",
          "response.function_call_arguments.delta",
          "response.output_item.done",
          "response.completed",
          "response.incomplete",
          "response.failed",
          "error",
        ),
      ),
      output_index: maybe(index),
      summary_index: maybe(fc.nat(2)),
      delta: maybe(argumentText),
      item: maybe(responsesItem),
      response: maybe(responsesResponse),
      message: maybe(fc.string({ maxLength: 4 })),
    },
    { requiredKeys: ["type"] },
  ),
  },
  { weight: 1, arbitrary: junk },
);

/** One streamed reply, and how its stream ends: as the server ends it, or with a thrown error. */
const stream = <T>(chunk: fc.Arbitrary<T>) => fc.record({ chunks: fc.array(chunk, { maxLength: 10 }), throws: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }) });

const tool = defineTool({ name: "work", description: "Work.", parameters: Type.Object({ n: Type.Number() }), execute: (_toolCallId, args) => textResult(String(args.n)) });

/** A client whose every call streams the next reply, then the last one again. */
function clientOf(replies: { chunks: unknown[]; throws: boolean }[]) {
  let call = 0;
  const create = async () => {
    const { chunks, throws } = replies[Math.min(call++, replies.length - 1)]!;
    return (async function* () {
      for (const chunk of chunks) yield chunk;
      if (throws) throw new Error("socket hang up");
    })();
  };
  return { chat: { completions: { create } }, responses: { create } };
}

async function checkRun(model: Model): Promise<void> {
  const events: AgentEvent[] = await lastValueFrom(agentLoop([userMessage("go")], { systemPrompt: "", messages: [], tools: [tool] }, { model, maxTurns: 4 }).pipe(toArray()));
  expect(events.at(-1)?.type).toBe("agent_end");
  expectOneResultPerToolCall(events);
  for (const event of events) {
    if (event.type !== "message_end" || event.message.role !== "assistant") continue;
    const { usage, errorMessage, content } = event.message;
    expect(["string", "undefined"]).toContain(typeof errorMessage);
    const { cost, ...counts } = usage;
    expect([...Object.values(counts), ...Object.values(cost)].filter((value) => !Number.isFinite(value))).toStrictEqual([]);
    for (const block of content) if (block.type === "toolCall") expect([typeof block.id, block.id !== "", typeof block.name]).toStrictEqual(["string", true, "string"]);
  }
}

describe("an OpenAI-compatible server that streams arbitrary chunks (property-based)", () => {
  it("Chat Completions: ends every run as data, with agent_end, one result per tool call, and usage of finite numbers", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stream(chatChunk), { minLength: 1, maxLength: 3 }), async (replies) => {
        await checkRun(openaiChat({ model: "m", client: clientOf(replies) as never, maxRetries: 0 }));
      }),
      { numRuns: 300 },
    );
  });

  it("Responses: ends every run as data, with agent_end, one result per tool call, and usage of finite numbers", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stream(responsesEvent), { minLength: 1, maxLength: 3 }), async (replies) => {
        await checkRun(openaiResponses({ model: "m", client: clientOf(replies) as never, maxRetries: 0 }));
      }),
      { numRuns: 300 },
    );
  });
});

describe("a chunk the model cannot read, and an error without a message", () => {
  // The run ended with "chunk.choices?.find is not a function" or '{"message":""}': neither named
  // the server or what it sent.
  it("names the chunk, and says the server's error had no message", async () => {
    const errorOf = async (chunks: unknown[]) => {
      const events: AgentEvent[] = await lastValueFrom(agentLoop([userMessage("go")], { messages: [] }, { model: openaiChat({ model: "m", client: clientOf([{ chunks, throws: false }]) as never, maxRetries: 0 }) }).pipe(toArray()));
      const end = events.at(-1);
      return end?.type === "agent_end" ? end.messages.at(-1) : undefined;
    };
    expect(await errorOf([{ choices: 5 }])).toMatchObject({ stopReason: "error", errorMessage: 'The server sent a chunk that could not be read ({"choices":5}): chunk.choices?.find is not a function' });
    expect(await errorOf([{ choices: [], error: { message: "" } }])).toMatchObject({ stopReason: "error", errorMessage: 'The server reported an error without a message: {"message":""}' });
    expect(await errorOf([{ choices: [], error: { message: "quota exceeded", code: "insufficient_quota" } }])).toMatchObject({ stopReason: "error", errorMessage: "quota exceeded (insufficient_quota)" });
  });
});
