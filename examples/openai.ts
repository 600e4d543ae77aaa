// The OpenAI provider: Chat Completions or the Responses API, or any compatible server (Ollama,
// vLLM, llama.cpp) through OPENAI_BASE_URL. Needs `npm i openai` and a key or a base URL.
// Run: OPENAI_API_KEY=... npx tsx examples/openai.ts   (without either it says so and exits)
import { Agent } from "rxagent";
import { openaiChat, openaiResponses } from "rxagent/openai";

const apiKey = process.env["OPENAI_API_KEY"];
const baseURL = process.env["OPENAI_BASE_URL"];
if (apiKey === undefined && baseURL === undefined) {
  console.log("Set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server) to run this example.");
} else {
  const settings = { model: process.env["OPENAI_MODEL"] ?? "gpt-4o-mini", ...(apiKey ? { apiKey } : {}), ...(baseURL ? { baseURL } : {}) };
  const model = process.env["OPENAI_API"] === "responses" ? openaiResponses(settings) : openaiChat(settings);
  const agent = new Agent({ systemPrompt: "You are terse.", model });
  const messages = await agent.run("Say hello in five words.");
  console.log(JSON.stringify(messages.at(-1), null, 2));
}
