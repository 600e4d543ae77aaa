import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { JsonlTranscriptStore } from "../../../src/server/index.js";
import { Agent } from "../../../src/agent/agent.js";
import { agentLoop } from "../../../src/streams/agent-loop.js";
import { INTERRUPTED_TOOL_TEXT, pairToolCalls } from "../../../src/streams/transcript/repair-transcript.js";
import { assertEventGrammar } from "../../../src/testing/event-grammar.js";
import { scriptedModel } from "../../../src/testing/scripted-model.js";
import type { AgentMessage, ToolResultMessage } from "../../../src/types.js";
import { assistantMessage, text, toolCall, toolResultMessage, userMessage } from "../../testing/fixtures.js";

const a = toolCall("a", "echo");
const b = toolCall("b", "echo");
const c = toolCall("c", "echo");
const interrupted = (call: typeof a, timestamp = 7): ToolResultMessage => ({ ...toolResultMessage(call, INTERRUPTED_TOOL_TEXT, { isError: true, timestamp }) });

describe("pairToolCalls", () => {
  it("returns undefined (no copy) when every call has its result", () => {
    const messages: AgentMessage[] = [userMessage("go"), assistantMessage([a, b]), toolResultMessage(a, "A"), toolResultMessage(b, "B"), assistantMessage([text("done")])];
    expect(pairToolCalls(messages, 7)).toBeUndefined();
  });

  it("pairs a call in the middle of the transcript, after the results its message has, before the next message", () => {
    const messages: AgentMessage[] = [
      userMessage("go"),
      assistantMessage([a, b]),
      toolResultMessage(a, "A"),
      assistantMessage([c]),
      toolResultMessage(c, "C"),
      userMessage("more"),
    ];
    expect(pairToolCalls(messages, 7)).toStrictEqual([
      userMessage("go"),
      assistantMessage([a, b]),
      toolResultMessage(a, "A"),
      interrupted(b),
      assistantMessage([c]),
      toolResultMessage(c, "C"),
      userMessage("more"),
    ]);
  });

  it("pairs calls at the end, unless the results follow among the run's first messages; failed messages' calls are left alone", () => {
    const failed = assistantMessage([a], { stopReason: "error", errorMessage: "x" });
    expect(pairToolCalls([userMessage("go"), failed, userMessage("again"), assistantMessage([b])], 7)).toStrictEqual([
      userMessage("go"),
      failed,
      userMessage("again"),
      assistantMessage([b]),
      interrupted(b),
    ]);
    expect(pairToolCalls([userMessage("go"), assistantMessage([b])], 7, [interrupted(b, 3)])).toBeUndefined();
  });
});

describe("before a model call, every unpaired call anywhere in the transcript is paired", () => {
  it("a run from a transcript with a result missing in the middle sends the model a paired transcript", async () => {
    const model = scriptedModel(["fine"]);
    const transcript: AgentMessage[] = [userMessage("go"), assistantMessage([a, b]), toolResultMessage(a, "A"), assistantMessage([text("ok")])];
    const events = await lastValueFrom(agentLoop([userMessage("next")], { messages: transcript }, { model }).pipe(toArray()));
    assertEventGrammar(events);
    expect(model.calls[0]!.messages.map((message) => [message.role, message.role === "toolResult" ? message.toolCallId : ""])).toStrictEqual([
      ["user", ""],
      ["assistant", ""],
      ["toolResult", "a"],
      ["toolResult", "b"],
      ["assistant", ""],
      ["user", ""],
    ]);
    // The caller's transcript is not changed, and agent_end reports only the run's messages.
    expect(transcript).toHaveLength(4);
    const end = events[events.length - 1] as { messages: AgentMessage[] };
    expect(end.messages.map((message) => (message as { role: string }).role)).toStrictEqual(["user", "assistant"]);
  });

  it("an Agent opened on a JSONL file whose middle lacks a tool result (a line once lost) gets a paired model call", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rxagent-pair-")), "transcript.jsonl");
    const lines = [userMessage("go"), assistantMessage([a, b]), toolResultMessage(b, "B"), assistantMessage([text("ok")])];
    writeFileSync(path, lines.map((message) => `${JSON.stringify(message)}\n`).join(""));
    const model = scriptedModel(["fine"]);
    const agent = await Agent.open({ model, store: new JsonlTranscriptStore(path) });
    await lastValueFrom(agent.prompt("next").pipe(toArray()));
    const sent = model.calls[0]!.messages;
    expect(sent.filter((message) => message.role === "toolResult").map((message) => (message as ToolResultMessage).toolCallId).sort()).toStrictEqual(["a", "b"]);
  });
});
