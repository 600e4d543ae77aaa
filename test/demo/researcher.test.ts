import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { demoModel } from "../../src/demo/demo-model.js";
import { detectIntents } from "../../src/demo/demo-intents.js";
import { demoTools } from "../../src/demo/demo-tools.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import type { AgentEvent, ToolResultMessage } from "../../src/types.js";
import { subAgentUpdateOf } from "../../src/types/sub-agent.js";

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rxagent-researcher-"));
  writeFileSync(join(root, "notes.md"), "# Notes\nThe launch is on Friday.\n");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the demo's researcher", () => {
  it("is what 'research …' asks for, with the rest of the text as its task", () => {
    expect(detectIntents("research what notes.md says").toolCalls).toStrictEqual([{ name: "researcher", arguments: { task: "what notes.md says" } }]);
    expect(detectIntents("please look into the files in src?").toolCalls).toStrictEqual([{ name: "researcher", arguments: { task: "the files in src" } }]);
    // Without the word, reading stays the agent's own.
    expect(detectIntents("read notes.md").toolCalls).toStrictEqual([{ name: "read_file", arguments: { path: "notes.md" } }]);
  });

  it("runs its own loop over the real file tools, shows its steps as the call's updates, and the agent answers from its report", async () => {
    const agent = new Agent({ model: demoModel({ delay: 0 }), tools: demoTools({ root, stepDelay: 0, researcherDelay: 0 }) });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((event) => events.push(event));
    await agent.run("research what notes.md says");
    assertEventGrammar(events);

    const nested = events.flatMap((event) => {
      const update = subAgentUpdateOf(event);
      return update && update.event.type.startsWith("tool_execution_") ? [`${update.agent}: ${update.event.type} ${(update.event as { toolName: string }).toolName}`] : [];
    });
    expect(nested).toStrictEqual(["researcher: tool_execution_start read_file", "researcher: tool_execution_end read_file"]);

    const report = agent.messages.find((message): message is ToolResultMessage => (message as { role: string }).role === "toolResult")!;
    expect([report.toolName, report.isError]).toStrictEqual(["researcher", false]);
    expect(report.content).toStrictEqual([{ type: "text", text: "notes.md has 2 lines (33 bytes). It begins:\n  > # Notes\n  > The launch is on Friday." }]);
    // The sub-agent's two model calls count in the agent's totals, beside the agent's own two.
    expect(report.usage?.output).toBeGreaterThan(0);
    expect(agent.state.usage.output).toBe(report.usage!.output + agent.messages.filter((message) => message.role === "assistant").reduce((sum, message) => sum + (message as { usage: { output: number } }).usage.output, 0));
    const answer = agent.messages.at(-1) as { content: { type: string; text: string }[] };
    expect(answer.content.map((block) => block.text).join("")).toContain("The researcher (a sub-agent) reports: notes.md has 2 lines");
  });
});
