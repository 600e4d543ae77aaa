import { Agent } from "../../src/agent/agent.js";
import { demoTools } from "../../src/demo/demo-tools.js";
import { compaction } from "../../src/streams/compaction.js";
import { conversationText } from "../../src/streams/summarize-with-model.js";
import type { AgentMessage, Model } from "../../src/types.js";

// A long session on the demo model, compacted on the way: test/fixtures/cassettes/
// compacted-session.cassette.jsonl was recorded from it (see that folder's README), and
// test/streams/compaction-cassette.test.ts replays it.

/** Twelve questions, each a calculator call and an answer: 36 messages without compaction. */
export const questions = Array.from({ length: 12 }, (_, index) => `what is ${index + 11}*7`);

/** A summarizer that needs no model: the first line of each message it summarizes, so a replay gets the same text. */
export function lineSummary(messages: readonly AgentMessage[]): string {
  return conversationText(messages)
    .split("\n\n")
    .map((paragraph) => paragraph.split("\n").slice(0, 2).join(" "))
    .join("; ");
}

/** Runs the session's questions one after the other on `model`, compacting past 600 input tokens. */
export async function runCompactedSession(model: Model, root: string): Promise<Agent> {
  const calculator = demoTools({ root, stepDelay: 0 }).filter((tool) => tool.name === "calculator");
  const agent = new Agent({ model, tools: calculator, ...compaction({ maxInputTokens: 600, keepRecent: 4, summarize: lineSummary }) });
  for (const question of questions) await agent.run(question);
  return agent;
}
