import { describe, expect, it } from "vitest";
import { Type } from "@sinclair/typebox";
import { Agent, agentLoop, agentLoopContinue, InvalidConfigError, textResult } from "../../src/index.js";
import type { AgentLoopConfig, AgentMessage, AgentTool, Model } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";

const prompt: AgentMessage = { role: "user", content: "Hi", timestamp: 0 };

// A plain object, as a tool written without defineTool (which checks its own concurrency) is.
function tool(name: string, concurrency?: number): AgentTool {
  return { name, label: name, description: name, parameters: Type.Object({}), execute: () => textResult(name), ...(concurrency === undefined ? {} : { concurrency }) };
}

/** The field and message of the InvalidConfigError that `create` throws at once. */
function invalidConfig(create: () => unknown): { field: string; message: string } {
  try {
    create();
  } catch (error) {
    if (error instanceof InvalidConfigError) return { field: error.field, message: error.message };
    throw error;
  }
  throw new Error("no InvalidConfigError was thrown");
}

// Each case is what a user can pass by mistake; `models[name]` that returned undefined is the
// missing model. Before these checks a missing model crashed the process from a subscriber,
// maxConcurrency 0 hung the run forever, and a duplicate tool name was silently shadowed.
const model = scriptedModel(["Hello"]);
const cases: { name: string; config: Partial<AgentLoopConfig>; tools?: AgentTool[]; field: string; message: RegExp }[] = [
  { name: "a missing model", config: { model: undefined as unknown as Model }, field: "model", message: /needs a model with a stream\(\) method, got undefined/ },
  { name: "a model without stream()", config: { model: { id: "x" } as unknown as Model }, field: "model", message: /got an object/ },
  { name: "maxConcurrency 0", config: { maxConcurrency: 0 }, field: "maxConcurrency", message: /must be a positive integer .* got 0/ },
  { name: "a negative maxConcurrency", config: { maxConcurrency: -2 }, field: "maxConcurrency", message: /got -2/ },
  { name: "a fractional maxConcurrency", config: { maxConcurrency: 1.5 }, field: "maxConcurrency", message: /got 1.5/ },
  { name: "a string maxConcurrency", config: { maxConcurrency: "4" as unknown as number }, field: "maxConcurrency", message: /got "4"/ },
  { name: "duplicate tool names", config: {}, tools: [tool("a"), tool("b"), tool("a")], field: "tools[2].name", message: /"a" is also the name of tools\[0\]/ },
  // Past 16 tools the names are looked up in a Map rather than scanned: the same answer.
  {
    name: "duplicate tool names among many tools",
    config: {},
    tools: [...Array.from({ length: 20 }, (_, index) => tool(`t${index}`)), tool("t1"), tool("t7")],
    field: "tools[20].name",
    message: /"t1" is also the name of tools\[1\]/,
  },
  { name: "both convertToLlm and convertMessageToLlm", config: { convertToLlm: (messages) => messages as never, convertMessageToLlm: (message) => message as never }, field: "convertMessageToLlm", message: /give either convertToLlm .* or convertMessageToLlm .*, not both/ },
  { name: "a convertMessageToLlm that is not a function", config: { convertMessageToLlm: "rename" as never }, field: "convertMessageToLlm", message: /must be a function, got "rename"/ },
  { name: "a tool concurrency of 0", config: {}, tools: [tool("a", 0)], field: "tools[0].concurrency", message: /got 0/ },
  // A limit past 1000 would let a value through that JSON.stringify cannot write; NaN or a string would disable the check.
  { name: "maxJsonDepth 0", config: { maxJsonDepth: 0 }, field: "maxJsonDepth", message: /must be an integer from 1 to 1000 \(or left out for 128\), got 0/ },
  { name: "maxJsonDepth past 1000", config: { maxJsonDepth: 6000 }, field: "maxJsonDepth", message: /got 6000/ },
  { name: "a fractional maxJsonDepth", config: { maxJsonDepth: 2.5 }, field: "maxJsonDepth", message: /got 2.5/ },
  { name: "a NaN maxJsonDepth", config: { maxJsonDepth: Number.NaN }, field: "maxJsonDepth", message: /got NaN/ },
  { name: "a string maxJsonDepth", config: { maxJsonDepth: "64" as unknown as number }, field: "maxJsonDepth", message: /got "64"/ },
];

describe("checkConfig", () => {
  describe.each(cases)("$name", ({ config, tools, field, message }) => {
    const loopConfig = { model, ...config } as AgentLoopConfig;
    const context = { messages: [prompt], ...(tools ? { tools } : {}) };

    it("agentLoop throws an InvalidConfigError naming the field, before anything runs", () => {
      const error = invalidConfig(() => agentLoop([prompt], context, loopConfig));
      expect(error.field).toBe(field);
      expect(error.message).toMatch(message);
    });

    it("agentLoopContinue throws it too", () => {
      expect(invalidConfig(() => agentLoopContinue(context, loopConfig)).field).toBe(field);
    });

    it("new Agent throws it, and so does configure", () => {
      expect(invalidConfig(() => new Agent({ ...loopConfig, ...(tools ? { tools } : {}) })).field).toBe(field);
      const agent = new Agent({ model });
      expect(invalidConfig(() => agent.configure({ ...config, ...(tools ? { tools } : {}) })).field).toBe(field);
    });
  });

  // Before checkContext each of these started a run that failed inside with a TypeError naming
  // none of them ("context.tools?.some is not a function", "Cannot read properties of undefined").
  const badContexts: { name: string; context: unknown; field: string; message: string }[] = [
    { name: "no context", context: undefined, field: "context", message: "Invalid context: agentLoop takes a context ({ messages, tools?, systemPrompt? }), got undefined." },
    { name: "a context without messages", context: {}, field: "context.messages", message: "Invalid context.messages: must be an array of messages (empty for a new conversation), got undefined." },
    { name: "tools that are an object", context: { messages: [], tools: { search: tool("search") } }, field: "context.tools", message: "Invalid context.tools: must be an array of tools (or left out), got an object." },
    { name: "a systemPrompt that is not a string", context: { messages: [], systemPrompt: ["Be brief."] }, field: "context.systemPrompt", message: "Invalid context.systemPrompt: must be a string (or left out), got an array." },
  ];
  it.each(badContexts)("agentLoop and agentLoopContinue throw for $name, naming the field", ({ context, field, message }) => {
    expect(invalidConfig(() => agentLoop([prompt], context as never, { model }))).toStrictEqual({ field, message });
    expect(invalidConfig(() => agentLoopContinue(context as never, { model })).field).toBe(field);
  });

  it("agentLoop throws when the prompts are not an array (a string would become one message per character)", () => {
    const error = invalidConfig(() => agentLoop("Hi" as unknown as AgentMessage[], { messages: [] }, { model }));
    expect(error).toStrictEqual({ field: "prompts", message: 'Invalid prompts: agentLoop takes an array of messages, got "Hi". Wrap one message in [ ].' });
  });

  // Before these checks agentLoop(["a", 42]) and agent.run(["a", "b"]) started a run with the raw
  // values in the transcript (issue 27, row 12).
  const badPrompts: { name: string; prompts: unknown[]; field: string; message: string }[] = [
    { name: "a string element", prompts: [prompt, "a"], field: "prompts[1]", message: 'prompts[1] is "a", not a message' },
    { name: "a number element", prompts: [prompt, prompt, 42], field: "prompts[2]", message: "prompts[2] is 42, not a message" },
    { name: "null", prompts: [null], field: "prompts[0]", message: "prompts[0] is null, not a message" },
    { name: "an element without a role", prompts: [{ content: "Hi", timestamp: 0 }], field: "prompts[0]", message: "prompts[0] has no role (role: undefined)" },
    { name: "an element without a timestamp", prompts: [{ role: "user", content: "Hi" }], field: "prompts[0]", message: "prompts[0] has no timestamp number (timestamp: undefined)" },
    { name: "a user message without content", prompts: [{ role: "user", timestamp: 0 }], field: "prompts[0]", message: 'prompts[0] (role "user") has content undefined, not a string or an array of blocks' },
    { name: "an assistant message with a string content", prompts: [{ role: "assistant", content: "x", timestamp: 0 }], field: "prompts[0]", message: 'prompts[0] (role "assistant") has content "x", not an array of blocks' },
    { name: "a block that is not a block", prompts: [{ role: "user", content: [7], timestamp: 0 }], field: "prompts[0]", message: 'prompts[0] (role "user") has content[0] 7, not a block with a type' },
  ];

  describe.each(badPrompts)("prompts with $name", ({ prompts, field, message }) => {
    it("agentLoop throws an InvalidConfigError naming the index and what was found", () => {
      const error = invalidConfig(() => agentLoop(prompts as AgentMessage[], { messages: [] }, { model }));
      expect(error.field).toBe(field);
      expect(error.message).toContain(`agentLoop takes messages, but ${message}`);
    });

    it("agent.run, prompt, steer and followUp throw it at once, and the transcript stays empty", async () => {
      const agent = new Agent({ model });
      await expect(agent.run(prompts as AgentMessage[])).rejects.toThrow(InvalidConfigError);
      expect(invalidConfig(() => agent.prompt(prompts as AgentMessage[])).field).toBe(field);
      expect(invalidConfig(() => agent.steer(prompts as AgentMessage[])).message).toContain(message);
      expect(invalidConfig(() => agent.followUp(prompts as AgentMessage[])).message).toContain(message);
      expect(agent.state.messages).toStrictEqual([]);
    });
  });

  it("accepts custom messages: any role with a timestamp, no content needed", () => {
    const notice = { role: "notice", text: "deployed", timestamp: 0 } as unknown as AgentMessage;
    expect(() => agentLoop([notice, prompt], { messages: [] }, { model })).not.toThrow();
  });

  it("accepts a good config: a positive integer or Infinity, unique names", () => {
    for (const maxConcurrency of [1, 8, Infinity, undefined]) {
      expect(() => agentLoop([prompt], { messages: [], tools: [tool("a", 2), tool("b")] }, { model, ...(maxConcurrency === undefined ? {} : { maxConcurrency }) })).not.toThrow();
    }
  });

  it("is an RxAgentError with the field in its name-bearing message", () => {
    const error = new InvalidConfigError("model", "missing.");
    expect([error.name, error.message, error.field]).toStrictEqual(["InvalidConfigError", "Invalid model: missing.", "model"]);
  });
});
