import { describe, expect, it } from "vitest";
import { detectIntents } from "../../src/demo/demo-intents.js";
import { offlineNotice, planReply } from "../../src/demo/demo-policy.js";
import { demoTools } from "../../src/demo/demo-tools.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AssistantMessage, LlmContext, Message, ToolResultMessage } from "../../src/types.js";

const tools = demoTools({ stepDelay: 0 });
const user = (content: string): Message => ({ role: "user", content, timestamp: 0 });
const assistantCalling = (...calls: [id: string, name: string, args: Record<string, unknown>][]): AssistantMessage => ({
  role: "assistant",
  content: calls.map(([id, name, args]) => ({ type: "toolCall", id, name, arguments: args })),
  api: "rxagent-demo",
  provider: "rxagent",
  model: "rxagent-demo",
  usage: emptyUsage(),
  stopReason: "toolUse",
  timestamp: 0,
});
const result = (toolCallId: string, toolName: string, text: string, details: unknown = {}, isError = false): ToolResultMessage => ({
  role: "toolResult",
  toolCallId,
  toolName,
  content: [{ type: "text", text }],
  details,
  isError,
  timestamp: 0,
});
const plan = (...messages: Message[]) => planReply({ messages, tools } satisfies LlmContext);

describe("planReply", () => {
  it("sends arithmetic to the calculator", () => {
    expect(plan(user("what is 12*7?"))).toStrictEqual({
      thinking: '"12*7" is arithmetic → calculator.',
      text: "Let me use the calculator tool.",
      toolCalls: [{ name: "calculator", arguments: { expression: "12*7" } }],
    });
  });

  it("issues independent requests as parallel tool calls in one reply, in the order asked", () => {
    const reply = plan(user("what is 12*7 and what time is it"));
    expect(reply.toolCalls).toStrictEqual([
      { name: "calculator", arguments: { expression: "12*7" } },
      { name: "clock", arguments: {} },
    ]);
    expect(reply.thinking).toContain("2 independent calls");
  });

  it("answers from the tool results", () => {
    const reply = plan(
      user("what is 12*7 and what time is it"),
      assistantCalling(["a", "calculator", { expression: "12*7" }], ["b", "clock", {}]),
      result("a", "calculator", "12*7 = 84", { expression: "12*7", steps: [], value: 84 }),
      result("b", "clock", "It is 10:00:00 on Monday (UTC)."),
    );
    expect(reply).toStrictEqual({
      text: "Here is what I found:\n- 12*7 = 84.\n- It is 10:00:00 on Monday (UTC).",
      toolCalls: [],
    });
  });

  it("explains a tool's refusal", () => {
    const reply = plan(user("read ../secret"), assistantCalling(["a", "read_file", { path: "../secret" }]), result("a", "read_file", '"../secret" is outside the sandbox', {}, true));
    expect(reply.text).toBe('The read_file tool refused: "../secret" is outside the sandbox');
  });

  it("acknowledges steering that arrived while tools ran, and handles the new question", () => {
    const reply = plan(
      user("what is 2+3"),
      assistantCalling(["a", "calculator", { expression: "2+3" }]),
      result("a", "calculator", "2+3 = 5", { value: 5 }),
      user("also what time is it"),
    );
    expect(reply.text).toBe('You said: "also what time is it" — So far: 2+3 = 5. Let me use the clock tool.');
    expect(reply.toolCalls).toStrictEqual([{ name: "clock", arguments: {} }]);
  });

  it("stops when steered to stop", () => {
    const reply = plan(user("list files"), assistantCalling(["a", "list_files", { path: "." }]), result("a", "list_files", "…", { path: ".", entries: [] }), user("never mind, stop"));
    expect(reply).toStrictEqual({ text: 'You said: "never mind, stop" — OK, I\'ll stop here. So far: . holds 0 entries: .', toolCalls: [] });
  });

  it("is honest about anything else", () => {
    expect(plan(user("what is the capital of France?"))).toStrictEqual({
      text: `I can't answer "what is the capital of France?" for real. ${offlineNotice}`,
      toolCalls: [],
    });
    expect(plan(user("hello")).text).toBe(`Hello! ${offlineNotice}`);
  });

  it("does not call tools the agent lacks", () => {
    expect(planReply({ messages: [user("what time is it")], tools: [] })).toStrictEqual({
      text: "I would need the clock tool for that, but this agent does not have it.",
      toolCalls: [],
    });
  });
});

describe("detectIntents", () => {
  it.each([
    ["what is the square root of 144 plus 3 times 4", [{ name: "calculator", arguments: { expression: "sqrt(144) + 3 * 4" } }]],
    ["calculate 2 + * 3", [{ name: "calculator", arguments: { expression: "2 + * 3" } }]],
    ["calculate hello", [{ name: "calculator", arguments: { expression: "hello" } }]],
    ["what's 3 x 4 and 10 / 4?", [{ name: "calculator", arguments: { expression: "3*4" } }, { name: "calculator", arguments: { expression: "10 / 4" } }]],
    ["list files in src", [{ name: "list_files", arguments: { path: "src" } }]],
    ["what files are in this folder", [{ name: "list_files", arguments: { path: "." } }]],
    ["read README.md", [{ name: "read_file", arguments: { path: "README.md" } }]],
    ["show me ../../etc/passwd", [{ name: "read_file", arguments: { path: "../../etc/passwd" } }]],
    ["read package.json and tell me the time", [{ name: "read_file", arguments: { path: "package.json" } }, { name: "clock", arguments: {} }]],
    ["the year 2026 was fine", []],
    ["tell me a story", []],
  ])("%s", (text, toolCalls) => {
    expect(detectIntents(text).toolCalls).toStrictEqual(toolCalls);
  });
});
