import { Type } from "@sinclair/typebox";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asyncScheduler, NEVER } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent, defineTool, textResult } from "../../src/index.js";
import type { AgentEvent, AgentTool, ToolResultMessage } from "../../src/index.js";
import { JsonlTranscriptStore } from "../../src/server/index.js";
import { assertEventGrammar, scriptedModel, type ScriptedTurn } from "../../src/testing/index.js";

function temporaryFile(): string {
  return join(mkdtempSync(join(tmpdir(), "rxagent-reopen-")), "transcript.jsonl");
}

/** deploy needs approval; read answers at once; hang never finishes. `ran` lists the calls that ran. */
function tools(ran: string[]): AgentTool[] {
  return [
    defineTool({
      name: "deploy",
      description: "Deploys; a person must approve",
      parameters: Type.Object({ target: Type.String() }),
      needsApproval: true,
      execute: (id, { target }) => {
        ran.push(id);
        return textResult(`deployed to ${target}`);
      },
    }),
    defineTool({
      name: "read",
      description: "Reads",
      parameters: Type.Object({}),
      execute: (id) => {
        ran.push(id);
        return textResult("read it");
      },
    }),
    defineTool({
      name: "hang",
      description: "Never finishes",
      parameters: Type.Object({}),
      execute: (id) => {
        ran.push(id);
        return NEVER;
      },
    }),
  ];
}

const batch: ScriptedTurn = {
  content: [
    { type: "toolCall", id: "h1", name: "hang", arguments: {} },
    { type: "toolCall", id: "d1", name: "deploy", arguments: { target: "prod" } },
    { type: "toolCall", id: "r1", name: "read", arguments: {} },
  ],
};

function resultsOf(messages: readonly unknown[]): [string, boolean, string][] {
  return (messages as ToolResultMessage[])
    .filter((message) => message.role === "toolResult")
    .map((result) => [result.toolCallId, result.isError, result.content.map((part) => (part.type === "text" ? part.text : "")).join("")]);
}

function toolEvents(events: AgentEvent[]): string[] {
  return events.flatMap((event) => {
    if (event.type.startsWith("tool_")) return [`${event.type} ${(event as { toolCallId: string }).toolCallId}`];
    if (event.type === "message_end") {
      const message = event.message as { role: string; toolCallId?: string };
      return [`message_end ${message.role}${message.toolCallId ? ` ${message.toolCallId}` : ""}`];
    }
    return event.type === "agent_start" || event.type === "turn_start" || event.type === "turn_end" || event.type === "agent_end" ? [event.type] : [];
  });
}

/** Runs the batch until d1 waits (h1 hangs, r1 finished), then leaves the agent as a killed process would. */
async function stopWhileWaiting(path: string): Promise<{ ran: string[]; since: number }> {
  const ran: string[] = [];
  const agent = new Agent({ model: scriptedModel([batch]), tools: tools(ran), store: new JsonlTranscriptStore(path) });
  agent.prompt("ship it");
  expect(agent.state.pendingApprovals.map((pending) => pending.toolCallId)).toStrictEqual(["d1"]);
  return { ran, since: agent.state.pendingApprovals[0]!.since };
}

describe("Agent.open with calls that waited for approval", () => {
  it("reopens them pending (same id, tool, args, since), keeps the finished result, repairs the running call, and approve continues the run", async () => {
    const path = temporaryFile();
    const stopped = await stopWhileWaiting(path);
    expect(stopped.ran).toStrictEqual(["h1", "r1"]);
    const stored = readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, { type?: string }>);
    expect(stored.map((line) => (line.role as unknown as string) ?? line.rxagent?.type)).toStrictEqual(["user", "assistant", "approval_pending", "tool_result"]);

    const ran: string[] = [];
    const model = scriptedModel(["Deployed."]);
    const events: AgentEvent[] = [];
    const agent = await Agent.open({ model, tools: tools(ran), store: new JsonlTranscriptStore(path) });
    agent.events$.subscribe((event) => events.push(event));
    expect(agent.isRunning).toBe(true);
    expect(agent.state.pendingApprovals).toStrictEqual([{ toolCallId: "d1", toolName: "deploy", args: { target: "prod" }, since: stopped.since }]);
    expect(agent.state.pendingToolCalls).toStrictEqual([]);
    expect(ran).toStrictEqual([]);

    agent.approve("d1");
    await agent.waitForIdle();
    expect(ran).toStrictEqual(["d1"]);
    expect(resultsOf(agent.messages)).toStrictEqual([
      ["h1", true, "The tool call was interrupted before the tool finished."],
      ["d1", false, "deployed to prod"],
      ["r1", false, "read it"],
    ]);
    expect(toolEvents(events)).toStrictEqual([
      "tool_approval_end d1",
      "tool_execution_end d1",
      "message_end toolResult h1",
      "message_end toolResult d1",
      "message_end toolResult r1",
      "message_end assistant",
      "turn_end",
      "agent_end",
    ]);
    expect(model.calls[0]?.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "toolResult", "toolResult"]);
    const reloaded = await new JsonlTranscriptStore(path).load();
    expect(reloaded).toStrictEqual(JSON.parse(JSON.stringify(agent.messages)));
  });

  it("replays the reopened run whole on currentRun$, well formed, and deny gives the denial result", async () => {
    const path = temporaryFile();
    await stopWhileWaiting(path);
    const events: AgentEvent[] = [];
    const agent = await Agent.open({ model: scriptedModel(["Not deployed."]), tools: tools([]), store: new JsonlTranscriptStore(path) });
    agent.currentRun$?.subscribe((event) => events.push(event));
    expect(toolEvents(events)).toStrictEqual(["agent_start", "turn_start", "tool_execution_start d1", "tool_approval_start d1"]);
    agent.deny("d1", "not on a Friday");
    await agent.waitForIdle();
    expect(resultsOf(agent.messages)).toStrictEqual([
      ["h1", true, "The tool call was interrupted before the tool finished."],
      ["d1", true, "Tool call was denied: not on a Friday"],
      ["r1", false, "read it"],
    ]);
    expect(toolEvents(events).slice(4)).toStrictEqual([
      "tool_approval_end d1",
      "tool_execution_end d1",
      "message_end toolResult h1",
      "message_end toolResult d1",
      "message_end toolResult r1",
      "message_end assistant",
      "turn_end",
      "agent_end",
    ]);
    assertEventGrammar(events);
    expect(agent.currentRun$).toBeUndefined();
  });

  it("abort while reopened calls wait settles them with the aborted result and ends the run", async () => {
    const path = temporaryFile();
    await stopWhileWaiting(path);
    const events: AgentEvent[] = [];
    const agent = await Agent.open({ model: scriptedModel([]), tools: tools([]), store: new JsonlTranscriptStore(path) });
    agent.currentRun$?.subscribe((event) => events.push(event));
    agent.abort();
    await agent.waitForIdle();
    expect(agent.state.pendingApprovals).toStrictEqual([]);
    expect(resultsOf(agent.messages)).toStrictEqual([
      ["h1", true, "The tool call was interrupted before the tool finished."],
      ["d1", true, "Tool execution was aborted."],
      ["r1", false, "read it"],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
    assertEventGrammar(events);
  });

  it("cancelToolCall ends a reopened wait with the cancel's error; the run goes on", async () => {
    const path = temporaryFile();
    await stopWhileWaiting(path);
    const agent = await Agent.open({ model: scriptedModel(["Cancelled."]), tools: tools([]), store: new JsonlTranscriptStore(path) });
    const events: AgentEvent[] = [];
    agent.currentRun$?.subscribe((event) => events.push(event));
    agent.cancelToolCall("d1", "not today");
    await agent.waitForIdle();
    expect(resultsOf(agent.messages)).toStrictEqual([
      ["h1", true, "The tool call was interrupted before the tool finished."],
      ["d1", true, "Tool call was cancelled: not today"],
      ["r1", false, "read it"],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
    assertEventGrammar(events);
  });

  it("a call approved before the stop was running: continue() repairs it as interrupted and keeps the finished result the store held", async () => {
    const path = temporaryFile();
    const ran: string[] = [];
    const slowDeploy = tools(ran).map((tool) => (tool.name === "deploy" ? { ...tool, execute: () => NEVER } : tool));
    const first = new Agent({ model: scriptedModel([batch]), tools: slowDeploy, store: new JsonlTranscriptStore(path) });
    first.prompt("ship it");
    first.approve("d1");
    expect(first.state.pendingToolCalls).toStrictEqual(["h1", "d1"]);

    const model = scriptedModel(["Interrupted; shall I retry?"]);
    const agent = await Agent.open({ model, tools: tools([]), store: new JsonlTranscriptStore(path) });
    expect(agent.isRunning).toBe(false);
    const events: AgentEvent[] = [];
    agent.continue().subscribe((event) => events.push(event));
    await agent.waitForIdle();
    expect(resultsOf(agent.messages)).toStrictEqual([
      ["h1", true, "The tool call was interrupted before the tool finished."],
      ["d1", true, "The tool call was interrupted before the tool finished."],
      ["r1", false, "read it"],
    ]);
    assertEventGrammar(events);
  });

  it("warns of a record for a call the last assistant message does not have, and ignores it", async () => {
    const path = temporaryFile();
    const store = new JsonlTranscriptStore(path);
    store.append({ role: "user", content: "hi", timestamp: 0 });
    store.record({ type: "approval_pending", approval: { toolCallId: "ghost", toolName: "deploy", args: {}, since: 3 } });
    store.close();
    const warnings: string[] = [];
    const agent = await Agent.open({ model: scriptedModel(["hello"]), tools: tools([]), store: new JsonlTranscriptStore(path), onWarning: (message) => warnings.push(message) });
    expect(agent.isRunning).toBe(false);
    expect(agent.state.pendingApprovals).toStrictEqual([]);
    expect(warnings).toStrictEqual([
      'The store holds a record (approval_pending) for tool call "ghost", which the transcript\'s last assistant message does not have; ignored.',
    ]);
  });

  it("a reopened call whose tool is gone gets the not-found error at once, without a wait, and the run goes on", async () => {
    const path = temporaryFile();
    await stopWhileWaiting(path);
    // Streamed in real time: the run is still going when open returns.
    const model = scriptedModel(["The deploy tool is gone."], { scheduler: asyncScheduler, delay: 1 });
    const agent = await Agent.open({ model, tools: tools([]).filter((tool) => tool.name !== "deploy"), store: new JsonlTranscriptStore(path) });
    const events: AgentEvent[] = [];
    agent.currentRun$?.subscribe((event) => events.push(event));
    await agent.waitForIdle();
    expect(resultsOf(agent.messages)).toStrictEqual([
      ["h1", true, "The tool call was interrupted before the tool finished."],
      ["d1", true, "Tool deploy not found. Available tools: read, hang."],
      ["r1", false, "read it"],
    ]);
    expect(toolEvents(events).slice(0, 4)).toStrictEqual(["agent_start", "turn_start", "tool_execution_start d1", "tool_execution_end d1"]);
    assertEventGrammar(events);
  });
});
