import { Type } from "@sinclair/typebox";
import { lastValueFrom } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../../src/agent/agent.js";
import { agentLoop } from "../../../src/streams/agent-loop.js";
import { scriptedModel } from "../../../src/testing/scripted-model.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { textResult } from "../../../src/tools/tool-results.js";
import type { AgentEvent, AgentMessage, ConvertMessageToLlm, Message } from "../../../src/types.js";
import { collect } from "../../helpers/collect.js";
import { userMessage } from "../../testing/fixtures.js";
import { watchedRejection } from "../../helpers/watched-rejection.js";

declare module "../../../src/types/messages.js" {
  interface CustomAgentMessages {
    notice: { role: "notice"; text: string; timestamp: number };
  }
}

const echo = defineTool({ name: "echo", description: "echo", parameters: Type.Object({}), execute: () => textResult("echoed") });
const callEcho = (id: string) => ({ content: [{ type: "toolCall" as const, id, name: "echo", arguments: {} }] });

/** A conversion that renames every user message's text and counts its calls per message. */
function countingConversion(): { convert: ConvertMessageToLlm; calls: Map<AgentMessage, number>; total: () => number } {
  const calls = new Map<AgentMessage, number>();
  const convert: ConvertMessageToLlm = (message) => {
    calls.set(message, (calls.get(message) ?? 0) + 1);
    if (message.role === "notice") return { role: "user", content: `[notice] ${message.text}`, timestamp: message.timestamp };
    if (message.role === "user") return { ...message, content: `> ${String(message.content)}` };
    return message;
  };
  return { convert, calls, total: () => [...calls.values()].reduce((sum, count) => sum + count, 0) };
}

function agentEndOf(events: AgentEvent[]): Extract<AgentEvent, { type: "agent_end" }> {
  const last = events[events.length - 1];
  if (last?.type !== "agent_end") throw new Error(`last event is ${last?.type}`);
  return last;
}

const roles = (messages: readonly Message[]) => messages.map((message) => message.role);

describe("convertMessageToLlm", () => {
  it("converts each message once across turns, and the model sees every message converted", () => {
    const { convert, calls, total } = countingConversion();
    const prompt = userMessage("go");
    const model = scriptedModel([callEcho("a"), callEcho("b"), callEcho("c"), "done"]);
    const events = collect(agentLoop([prompt], { messages: [] }, { model, convertMessageToLlm: convert }));
    const transcript = [prompt, ...agentEndOf(events).messages.slice(1)];
    // 4 model calls over a transcript growing to 7 messages: each converted once, the last
    // assistant message never (no call came after it).
    expect(transcript).toHaveLength(8);
    expect(total()).toBe(7);
    expect([...calls.values()].every((count) => count === 1)).toBe(true);
    expect(model.calls.map((call) => roles(call.messages))).toStrictEqual([
      ["user"],
      ["user", "assistant", "toolResult"],
      ["user", "assistant", "toolResult", "assistant", "toolResult"],
      ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant", "toolResult"],
    ]);
    expect(model.calls[3]!.messages[0]).toStrictEqual({ ...prompt, content: "> go" });
  });

  it("leaves out what it answers undefined for, and splices in several messages for one", () => {
    const notice: AgentMessage = { role: "notice", text: "deploy started", timestamp: 0 };
    const hidden: AgentMessage = { role: "notice", text: "hidden", timestamp: 0 };
    const prompt = userMessage("go");
    const model = scriptedModel(["ok"]);
    collect(
      agentLoop([prompt], { messages: [notice, hidden] }, {
        model,
        convertMessageToLlm: (message) => {
          if (message === hidden) return undefined;
          if (message.role === "notice") return [userMessage("[notice]"), userMessage(message.text)];
          return message;
        },
      }),
    );
    expect(model.calls[0]!.messages).toStrictEqual([userMessage("[notice]"), userMessage("deploy started"), prompt]);
  });

  it("keeps conversions across an Agent's runs: a message is converted once however many prompts follow", async () => {
    const { convert, calls, total } = countingConversion();
    const model = scriptedModel([callEcho("a"), "one", "two", "three"]);
    const agent = new Agent({ model, tools: [echo], convertMessageToLlm: convert });
    await lastValueFrom(agent.prompt("first"));
    await lastValueFrom(agent.prompt("second"));
    await lastValueFrom(agent.prompt("third"));
    // Transcript: user, assistant(call), toolResult, assistant, user, assistant, user, assistant.
    expect(agent.state.messages).toHaveLength(8);
    expect(total()).toBe(7);
    expect([...calls.values()].every((count) => count === 1)).toBe(true);
    expect(model.calls[3]!.messages.map((message) => (message.role === "user" ? message.content : message.role))).toStrictEqual([
      "> first",
      "assistant",
      "toolResult",
      "assistant",
      "> second",
      "assistant",
      "> third",
    ]);
  });

  it("converts again what prepareNextTurn rewrote as new objects, and only that", () => {
    const { convert, calls } = countingConversion();
    const prompt = userMessage("go");
    const summary = userMessage("summary of the first turn");
    const model = scriptedModel([callEcho("a"), callEcho("b"), "done"]);
    let turn = 0;
    collect(
      agentLoop([prompt], { messages: [] }, {
        model,
        convertMessageToLlm: convert,
        // After the first turn: compaction replaces the transcript by the prompt and a summary.
        prepareNextTurn: ({ context }) => (++turn === 1 ? { context: { ...context, messages: [prompt, summary] } } : undefined),
      }),
    );
    expect(calls.get(prompt)).toBe(1);
    expect(calls.get(summary)).toBe(1);
    expect(model.calls.map((call) => call.messages.map((message) => (message.role === "user" ? message.content : message.role)))).toStrictEqual([
      ["> go"],
      ["> go", "> summary of the first turn"],
      ["> go", "> summary of the first turn", "assistant", "toolResult"],
    ]);
  });

  it("converts transformContext's answer, each message still once", () => {
    const { convert, total } = countingConversion();
    const old = userMessage("old");
    const prompt = userMessage("go");
    const model = scriptedModel([callEcho("a"), "done"]);
    collect(
      agentLoop([prompt], { messages: [old] }, {
        model,
        convertMessageToLlm: convert,
        transformContext: (messages) => messages.slice(1),
      }),
    );
    expect(model.calls.map((call) => roles(call.messages))).toStrictEqual([["user"], ["user", "assistant", "toolResult"]]);
    expect(total()).toBe(3);
  });

  it("ends the turn with an error message when it throws, naming the hook", () => {
    const model = scriptedModel(["never"]);
    const events = collect(
      agentLoop([userMessage("go")], { messages: [] }, {
        model,
        convertMessageToLlm: () => {
          throw new Error("no such role");
        },
      }),
    );
    const end = agentEndOf(events);
    expect(end.messages[1]).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "convertMessageToLlm failed: no such role" });
    expect(model.calls).toStrictEqual([]);
  });

  // An async conversion's Promise was refused as "an object", and its rejection ended the process.
  it("ends the turn with an error message when it answers with a Promise, and handles its rejection", () => {
    const { thenable, handled } = watchedRejection();
    const model = scriptedModel(["never"]);
    const events = collect(agentLoop([userMessage("go")], { messages: [] }, { model, convertMessageToLlm: () => thenable as never }));
    expect(agentEndOf(events).messages[1]).toMatchObject({ stopReason: "error", errorMessage: "convertMessageToLlm failed: it returned a Promise, and it must answer synchronously" });
    expect(handled()).toBe(true);
    expect(model.calls).toStrictEqual([]);
  });

  it("ends the turn with an error message when it answers something that is not a model message", () => {
    const model = scriptedModel(["never"]);
    const events = collect(
      agentLoop([userMessage("go")], { messages: [] }, {
        model,
        convertMessageToLlm: (message) => ({ ...message, role: "notice" }) as never,
      }),
    );
    expect(agentEndOf(events).messages[1]).toMatchObject({
      stopReason: "error",
      errorMessage: "convertMessageToLlm failed: for message #0 it returned a \"notice\" message, not a user, assistant or toolResult message",
    });
    expect(model.calls).toStrictEqual([]);
  });
});
