import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { JsonlTranscriptStore } from "../../src/server/jsonl-transcript-store.js";
import { compaction } from "../../src/streams/compaction.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentMessage } from "../../src/types.js";

const read = defineTool({ name: "read", description: "Reads a page", parameters: Type.Object({ page: Type.Number() }), execute: (_id, { page }) => textResult(`page ${page}: ${"lorem ipsum ".repeat(40)}`) });
const callRead = (page: number): ScriptedTurn => ({ content: [{ type: "toolCall", id: `r${page}`, name: "read", arguments: { page } }], usage: { input: 50 * page, output: 10 } });
const summaryOf = (messages: readonly AgentMessage[]) => `summary of ${messages.length} messages`;
const compacting = compaction({ maxInputTokens: 150, keepRecent: 2, summarize: summaryOf });

/** A message as the model saw it, in a word: its role, or a user message's first line of text. */
const seen = (message: { role: string; content?: unknown }) => (message.role === "user" ? String(message.content).split("\n").at(-2) ?? String(message.content) : message.role);

describe("compaction in an Agent's transcript", () => {
  it("is kept by the JSONL store, and a reopened session continues from the summary", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rxagent-compaction-")), "transcript.jsonl");
    const store = new JsonlTranscriptStore(path);
    const first = await Agent.open({ model: scriptedModel([callRead(1), callRead(2), "Done"]), tools: [read], store, ...compacting });
    await first.run("Read two pages");
    store.close();
    const roles = ["user", "assistant", "toolResult", "compactionSummary", "assistant", "toolResult", "compactionSummary", "assistant"];
    expect(first.state.messages.map((message) => message.role)).toStrictEqual(roles);

    const model = scriptedModel(["Still here"]);
    const reopened = await Agent.open({ model, tools: [read], store: new JsonlTranscriptStore(path), ...compacting });
    // As JSON: the store writes no field that is undefined.
    expect(reopened.state.messages).toStrictEqual(JSON.parse(JSON.stringify(first.state.messages)));
    await reopened.run("Go on");
    expect(model.calls[0]!.messages.map(seen)).toStrictEqual(["summary of 3 messages", "assistant", "toolResult", "assistant", "Go on"]);
  });
});
