import { Type } from "@sinclair/typebox";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { lastValueFrom, tap, toArray } from "rxjs";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { StandardSchemaV1 } from "../../src/tools/standard-schema.js";
import type { AgentEvent, AgentTool, AssistantMessage } from "../../src/types.js";
import { call, runToolTurn, runToolTurnAsync } from "../operators/tool-calls/run-tools.js";
import { userMessage } from "../testing/fixtures.js";
// Ajv loaded up front, as `rxagent/json-schema` does: these tests check its answers, given at once.
import "../../src/json-schema/index.js";

function echoTool(name: string, parameters: object): AgentTool {
  return { name, label: name, description: "", parameters, execute: (_id, args) => textResult(JSON.stringify(args)) };
}

describe("tool schemas in a run", () => {
  it("runs plain JSON Schema tools as MCP servers describe them, with coercion", () => {
    const tool = echoTool("sum", { type: "object", properties: { a: { type: "number" }, b: { type: "number", default: 1 } }, required: ["a"] });
    const turn = runToolTurn([tool], [call("sum", { a: "2" })]);
    expect(turn.texts).toStrictEqual(['{"a":2,"b":1}']);
  });

  it("gives a plain tool whose schema cannot be used an error result naming it; the run goes on", () => {
    const tools = [
      echoTool("bad_json", { type: "nope" }),
      echoTool("plain_valibot", v.object({ a: v.string() })),
      echoTool("fine", Type.Object({ a: Type.String() })),
    ];
    const turn = runToolTurn(tools, [call("bad_json", {}), call("plain_valibot", { a: "x" }), call("fine", { a: "x" })]);
    expect(turn.results.map((result) => result.isError)).toStrictEqual([true, true, false]);
    expect(turn.texts[0]).toMatch(/^Tool "bad_json" has parameters that cannot be used as a schema: schema is invalid: data\/type must be/);
    expect(turn.texts[1]).toBe(
      'Tool "plain_valibot" has parameters that cannot be used as a schema: the valibot schema offers no JSON Schema for the model (no ~standard.jsonSchema); wrap it in a Standard JSON Schema (valibot: toStandardJsonSchema from @valibot/to-json-schema)',
    );
    expect(turn.texts[2]).toBe('{"a":"x"}');
    expect(turn.events.at(-1)?.type).toBe("agent_end");
    expect(turn.modelCalls).toBe(2);
  });

  it("sends the model JSON Schema for zod and valibot tools and hands execute the parsed output", () => {
    const zodTool = defineTool({
      name: "weather",
      description: "Weather for a city",
      parameters: z.object({ city: z.string(), days: z.number().default(3) }),
      execute: (_id, { city, days }) => textResult(`${city}:${days}`),
    });
    const valibotTool = defineTool({
      name: "shout",
      description: "Upper-cases",
      parameters: toStandardJsonSchema(v.object({ text: v.string(), loud: v.optional(v.boolean(), true) })),
      execute: (_id, { text, loud }) => textResult(loud ? text.toUpperCase() : text),
    });
    const turn = runToolTurn([zodTool, valibotTool], [call("weather", { city: "Oslo" }), call("shout", { text: "hey" })]);
    expect(turn.texts).toStrictEqual(["Oslo:3", "HEY"]);
    const model = scriptedModel([{ content: [call("weather", { city: "Oslo" })] }, "done"]);
    return lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [zodTool, valibotTool] }, { model }).pipe(toArray())).then(() => {
      expect(model.calls[0]!.tools).toStrictEqual([
        {
          name: "weather",
          description: "Weather for a city",
          parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "number", default: 3 } }, required: ["city"] },
        },
        {
          name: "shout",
          description: "Upper-cases",
          parameters: { type: "object", properties: { text: { type: "string" }, loud: { type: "boolean", default: true } }, required: ["text"] },
        },
      ]);
      expect(model.calls[1]!.tools![0]).toBe(model.calls[0]!.tools![0]);
    });
  });

  it("waits for a Standard Schema that validates asynchronously", async () => {
    const tool = defineTool({
      name: "register",
      description: "",
      parameters: z.object({ name: z.string().refine(async (name) => name !== "taken", "name is taken") }),
      execute: (_id, { name }) => textResult(`registered ${name}`),
    });
    const turn = await runToolTurnAsync([tool], [call("register", { name: "ada" }), call("register", { name: "taken" })]);
    expect(turn.texts).toStrictEqual([
      "registered ada",
      'Invalid arguments for tool "register":\n  - /name: name is taken (received "taken")\nReceived arguments: {"name":"taken"}',
    ]);
    assertEventGrammar(turn.events);
  });

  it("answers a Standard Schema whose validation rejects, or is still pending at an abort, with an error result", async () => {
    const jsonSchema = { input: () => ({ type: "object" }), output: () => ({ type: "object" }) };
    const rejecting: StandardSchemaV1 = {
      "~standard": { version: 1, vendor: "test", jsonSchema, validate: () => Promise.reject(new Error("lookup service down")) },
    };
    const pending: StandardSchemaV1 = { "~standard": { version: 1, vendor: "test", jsonSchema, validate: () => new Promise(() => undefined) } };
    const turn = await runToolTurnAsync([echoTool("lookup", rejecting)], [call("lookup", {})]);
    expect(turn.texts).toStrictEqual(['Validating the arguments of tool "lookup" failed: lookup service down']);
    const abort = new AbortController();
    const events = await lastValueFrom(
      agentLoop([userMessage("go")], { messages: [], tools: [echoTool("slow", pending)] }, {
        model: scriptedModel([{ content: [call("slow", {})] }, "done"]),
        signal: abort.signal,
      }).pipe(
        tap((event) => event.type === "tool_execution_start" && queueMicrotask(() => abort.abort())),
        toArray(),
      ),
    );
    assertEventGrammar(events);
    expect(events.flatMap((event) => (event.type === "tool_execution_end" ? [event.isError] : []))).toStrictEqual([true]);
    expect(events.at(-1)?.type).toBe("agent_end");
  });

  // Each ended the run ("The run failed: …"), the other calls of the batch and the next model call with it.
  it("gives a call whose validator throws an error result saying why; the run goes on", () => {
    const jsonSchema = { input: () => ({ type: "object" }), output: () => ({ type: "object" }) };
    const throwing: StandardSchemaV1 = { "~standard": { version: 1, vendor: "test", jsonSchema, validate: () => { throw new Error("validator bug"); } } };
    // Refers to itself as a whole: checking it applies it to the same value again, without end (an MCP server sent one).
    const selfReferring = { type: "object", $ref: "#" };
    const tools = [echoTool("standard", throwing), echoTool("endless", selfReferring), echoTool("fine", Type.Object({}))];
    const turn = runToolTurn(tools, [call("standard", {}), call("endless", {}), call("fine", {})]);
    expect(turn.texts).toStrictEqual([
      'Validating the arguments of tool "standard" failed: validator bug',
      'Validating the arguments of tool "endless" failed: Maximum call stack size exceeded',
      "{}",
    ]);
    assertEventGrammar(turn.events);
    expect(turn.modelCalls).toBe(2);
  });

  it("hands tools and beforeToolCall a copy: changing it leaves the transcript and the next model call alone", () => {
    const tool = defineTool({
      name: "mutate",
      description: "",
      parameters: Type.Object({ options: Type.Object({ depth: Type.Number() }) }),
      execute: (_id, args) => {
        args.options.depth = 99;
        return textResult(`depth ${args.options.depth}`);
      },
    });
    const model = scriptedModel([{ content: [call("mutate", { options: { depth: 1 } })] }, "done"]);
    const events: AgentEvent[] = [];
    agentLoop([userMessage("go")], { messages: [], tools: [tool] }, {
      model,
      beforeToolCall: ({ args }) => {
        (args as { options: { depth: number; seen?: boolean } }).options.seen = true;
        return undefined;
      },
    }).subscribe((event) => events.push(event));
    const assistant = model.calls[1]!.messages[1] as AssistantMessage;
    expect(assistant.content).toStrictEqual([{ type: "toolCall", id: "call_1_1", name: "mutate", arguments: { options: { depth: 1 } } }]);
    const start = events.find((event) => event.type === "tool_execution_start");
    expect(start).toMatchObject({ args: { options: { depth: 1 } } });
    expect(events.flatMap((event) => (event.type === "tool_execution_end" ? [(event.result as { content: unknown }).content] : []))).toStrictEqual([
      [{ type: "text", text: "depth 99" }],
    ]);
  });
});
