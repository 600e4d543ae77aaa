import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
import { it } from "vitest";
import { agentLoop, defineTool } from "../../src/index.js";
import { openaiChat } from "../../src/openai/index.js";
import { assertEventGrammar } from "../../src/testing/index.js";

const tool = defineTool({ name: "t", description: "t", parameters: Type.Object({}), execute: () => ({ content: [{ type: "text", text: "ok" }], details: {} }) });
function clientOf(chunks: unknown[]) {
  let call = 0;
  return { chat: { completions: { create: async () => {
    const these = call++ === 0 ? chunks : [{ choices: [{ index: 0, delta: { content: "done" }, finish_reason: "stop" }] }];
    return (async function* () { for (const c of these) yield c; })();
  } } } };
}
const cases: Record<string, unknown[]> = {
  bigIndex: [{ choices: [{ index: 0, delta: { tool_calls: [{ index: 1e9, id: "c1", function: { name: "t", arguments: "{}" } }] } }] }, { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }],
  negIndex: [{ choices: [{ index: 0, delta: { tool_calls: [{ index: -1, id: "c1", function: { name: "t", arguments: "{}" } }] } }] }, { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }],
  strIndex: [{ choices: [{ index: 0, delta: { tool_calls: [{ index: "0", id: "c1", function: { name: "t", arguments: "{}" } }] } }] }, { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }],
  toolCallsObject: [{ choices: [{ index: 0, delta: { tool_calls: { index: 0 } } }] }],
  choicesNull: [{ choices: null }, null, 5, "x", { choices: [null, 5, { delta: "x" }] }],
  contentNumber: [{ choices: [{ index: 0, delta: { content: 5, reasoning_content: {}, refusal: [] }, finish_reason: 7 }] }],
  usageWeird: [{ choices: [{ index: 0, delta: { content: "a" }, finish_reason: "stop" }], usage: { prompt_tokens: "x", completion_tokens: null, total_tokens: {}, prompt_tokens_details: 5 } }],
  argsNotString: [{ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 5, function: { name: {}, arguments: { a: 1 } } }] } }] }, { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }],
  choiceIndexBig: [{ choices: [{ index: 1e9, delta: { content: "a" }, finish_reason: "stop" }] }],
  functionNull: [{ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c", function: null }, null, 5] } }] }, { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }],
};
it("probe", async () => {
  for (const [name, chunks] of Object.entries(cases)) {
    const model = openaiChat({ model: "m", client: clientOf(chunks) as never });
    const start = performance.now();
    try {
      const events = await lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [tool] }, { model }).pipe(toArray()));
      let grammar = "ok"; try { assertEventGrammar(events); } catch (e) { grammar = String(e).slice(0, 200); }
      const end = events.at(-1) as { type: string; messages?: { role: string; stopReason?: string; errorMessage?: string; content?: unknown }[] };
      console.log(name, (performance.now() - start).toFixed(0), "ms", end.type, grammar, JSON.stringify(end.messages?.map((m) => [m.role, m.stopReason, m.errorMessage?.slice(0, 100)])).slice(0, 400));
    } catch (error) { console.log(name, "THREW", String(error).slice(0, 300)); }
  }
}, 120000);
