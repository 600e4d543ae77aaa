import { Type } from "@sinclair/typebox";
import { agentLoop, defineTool, textResult } from "rxagent";
import { scriptedModel, assertEventGrammar } from "rxagent/testing";
import type { AgentEvent } from "rxagent";

const add = defineTool({
  name: "add",
  description: "Adds two numbers",
  parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
  execute: (_id, { a, b }) => textResult(String(a + b)),
});

const model = scriptedModel([
  { content: [{ type: "text", text: "Let me add." }, { type: "toolCall", name: "add", arguments: { a: 2, b: "3" } }] },
  (context) => `The sum is ${JSON.stringify(context.messages.at(-1))}`,
]);

const events: AgentEvent[] = [];
agentLoop([{ role: "user", content: "What is 2 + 3?", timestamp: 0 }], { systemPrompt: "You add.", messages: [], tools: [add] }, { model }).subscribe({
  next: (event) => {
    events.push(event);
    console.log(event.type, event.type === "message_end" ? JSON.stringify(event.message).slice(0, 150) : "");
  },
  complete: () => {
    assertEventGrammar(events);
    console.log("grammar ok");
  },
});
