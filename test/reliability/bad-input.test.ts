/**
 * Bad inputs of the bad-input catalogue (docs/bad-input.md) that no other test showed.
 */
import { Type } from "@sinclair/typebox";
import { EMPTY, Observable, throwError } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentMessage, AssistantMessage, Model, ModelEvent, ToolResultMessage } from "../../src/types.js";

const prompt: AgentMessage = { role: "user", content: "go", timestamp: 0 };

function collect(source: Observable<AgentEvent>): AgentEvent[] {
  const events: AgentEvent[] = [];
  source.subscribe((event) => events.push(event));
  return events;
}

function endOf(events: AgentEvent[]): Extract<AgentEvent, { type: "agent_end" }> {
  const end = events[events.length - 1];
  if (end?.type !== "agent_end") throw new Error("no agent_end");
  return end;
}

function modelOf(stream: Model["stream"]): Model {
  return { id: "bad", provider: "bad", api: "bad", stream };
}

describe("bad inputs", () => {
  it("a model whose stream() throws synchronously: an error message, the run ends", () => {
    const model = modelOf(() => {
      throw new Error("no such endpoint");
    });
    const events = collect(agentLoop([prompt], { messages: [] }, { model }));
    assertEventGrammar(events);
    const assistant = endOf(events).messages[1] as AssistantMessage;
    expect(assistant).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "Model stream failed: no such endpoint" });
  });

  it("a model that goes on after done: the extra events are ignored", () => {
    const scripted = scriptedModel(["fine"]);
    const model = modelOf(
      (context, options) =>
        new Observable<ModelEvent>((subscriber) => {
          const events: ModelEvent[] = [];
          scripted.stream(context, options).subscribe((event) => events.push(event));
          for (const event of events) subscriber.next(event);
          for (const event of events) subscriber.next(event);
          subscriber.complete();
        }),
    );
    const events = collect(agentLoop([prompt], { messages: [] }, { model }));
    assertEventGrammar(events);
    expect(events.filter((event) => event.type === "message_end")).toHaveLength(2);
  });

  it("hooks that answer with an empty or an erroring Observable", () => {
    const echo = defineTool({ name: "echo", description: "e", parameters: Type.Object({}), execute: () => textResult("echo") });
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "a", name: "echo", arguments: {} }] }, "done"]);
    const events = collect(
      agentLoop([prompt], { messages: [], tools: [echo] }, {
        model,
        beforeToolCall: () => EMPTY,
        afterToolCall: () => throwError(() => new Error("audit log down")),
        shouldStopAfterTurn: () => EMPTY,
      }),
    );
    assertEventGrammar(events);
    const result = endOf(events).messages[2] as ToolResultMessage;
    // An empty beforeToolCall allows the call; an erroring afterToolCall makes the result an error.
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: 'afterToolCall failed for tool "echo": audit log down' }] });
    // An empty shouldStopAfterTurn does not stop the run.
    expect(endOf(events).messages).toHaveLength(4);
  });

  it("a tool that calls update() after it settled: the late update is dropped", () => {
    let late: (() => void) | undefined;
    const tool = defineTool({
      name: "chatty",
      description: "c",
      parameters: Type.Object({}),
      execute: (_id, _args, { update }) => {
        late = () => update(textResult("too late"));
        return textResult("done");
      },
    });
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "a", name: "chatty", arguments: {} }] }, "ok"]);
    const events = collect(agentLoop([prompt], { messages: [], tools: [tool] }, { model }));
    late!();
    assertEventGrammar(events);
    expect(events.filter((event) => event.type === "tool_execution_update")).toHaveLength(0);
  });

  it("a transcript store whose append throws: a warning, and the run goes on", () => {
    const warnings: string[] = [];
    const agent = new Agent({
      model: scriptedModel(["hello"]),
      store: {
        load: async () => [],
        append: () => {
          throw new Error("disk full");
        },
        clear: () => undefined,
      },
      onWarning: (message) => warnings.push(message),
    });
    const events = collect(agent.prompt("hi"));
    assertEventGrammar(events);
    expect(agent.state.messages).toHaveLength(2);
    expect(warnings).toStrictEqual([
      "The transcript store failed to append a message: disk full",
      "The transcript store failed to append a message: disk full",
    ]);
  });
});
