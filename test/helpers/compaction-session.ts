import { Type } from "@sinclair/typebox";
import { expect } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { compaction } from "../../src/streams/compaction.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentMessage, TranscriptStore } from "../../src/types.js";

// One session compacted twice, stored, then reopened from the store: the same steps for every
// store (JSONL, Redis), since compaction keeps its summary as one more message.

const read = defineTool({ name: "read", description: "Reads a page", parameters: Type.Object({ page: Type.Number() }), execute: (_id, { page }) => textResult(`page ${page}: ${"lorem ipsum ".repeat(40)}`) });
const callRead = (page: number): ScriptedTurn => ({ content: [{ type: "toolCall", id: `r${page}`, name: "read", arguments: { page } }], usage: { input: 50 * page, output: 10 } });
const summaryOf = (messages: readonly AgentMessage[]) => `summary of ${messages.length} messages`;
const compacting = compaction({ maxInputTokens: 150, keepRecent: 2, summarize: summaryOf });

/** A message as the model saw it, in a word: its role, or the summary's (or a prompt's) line of text. */
const seen = (message: { role: string; content?: unknown }) => (message.role === "user" ? (String(message.content).split("\n").at(-2) ?? String(message.content)) : message.role);

/**
 * Runs a session that compacts twice on `store`, lets `settle` wait for the store, then reopens it
 * on `reopenedStore` and checks that the next call continues from the last summary.
 */
export async function expectReopenedFromSummary(store: TranscriptStore, settle: () => Promise<void>, reopenedStore: () => TranscriptStore): Promise<void> {
  const first = await Agent.open({ model: scriptedModel([callRead(1), callRead(2), "Done"]), tools: [read], store, ...compacting });
  await first.run("Read two pages");
  await settle();
  const roles = ["user", "assistant", "toolResult", "compactionSummary", "assistant", "toolResult", "compactionSummary", "assistant"];
  expect(first.state.messages.map((message) => message.role)).toStrictEqual(roles);

  const model = scriptedModel(["Still here"]);
  // A budget the new prompt stays within: the call continues from the stored summary, not from a new one.
  const reopened = await Agent.open({ model, tools: [read], store: reopenedStore(), ...compaction({ maxInputTokens: 10_000, keepRecent: 2, summarize: summaryOf }) });
  // As JSON: a store writes no field that is undefined.
  expect(reopened.state.messages).toStrictEqual(JSON.parse(JSON.stringify(first.state.messages)));
  await reopened.run("Go on");
  expect(model.calls[0]!.messages.map(seen)).toStrictEqual(["summary of 3 messages", "assistant", "toolResult", "assistant", "Go on"]);
}
