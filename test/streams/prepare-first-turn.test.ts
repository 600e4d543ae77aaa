import { Type } from "@sinclair/typebox";
import { NEVER } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentLoopConfig, AgentMessage } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";
import { userMessage } from "../testing/fixtures.js";

const echo = defineTool({ name: "echo", description: "Echoes", parameters: Type.Object({}), execute: () => textResult("ok") });
const callEcho = { content: [{ type: "toolCall" as const, id: "e1", name: "echo", arguments: {} }] };
const roles = (messages: readonly AgentMessage[]) => messages.map((message) => (message as { role: string }).role);
const endOf = (events: readonly AgentEvent[]) => events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;

/** A run of two turns (an echo call, then an answer) on a transcript with one earlier message, synchronous. */
function runSync(config: Omit<AgentLoopConfig, "model">) {
  const model = scriptedModel([callEcho, "done"]);
  const events: AgentEvent[] = [];
  agentLoop([userMessage("now")], { messages: [userMessage("before")], tools: [echo] }, { ...config, model }).subscribe((event) => events.push(event));
  assertEventGrammar(events);
  return { events, model };
}

describe("prepareFirstTurn", () => {
  it("is asked once, after the prompts and before the first model call; prepareNextTurn covers the turns after it", () => {
    const order: string[] = [];
    const seen: unknown[] = [];
    const { events } = runSync({
      prepareFirstTurn: ({ context, newMessages }) => {
        order.push("prepareFirstTurn");
        seen.push([roles(context.messages), newMessages.map((message) => (message as { content: string }).content)]);
        return undefined;
      },
      prepareNextTurn: () => void order.push("prepareNextTurn"),
    });
    const kinds = events.flatMap((event) => (event.type === "message_end" ? [`message_end:${(event.message as { role: string }).role}`] : event.type === "turn_start" ? ["turn_start"] : []));
    expect([...order]).toStrictEqual(["prepareFirstTurn", "prepareNextTurn"]);
    expect(seen).toStrictEqual([[["user", "user"], ["now"]]]);
    expect(kinds).toStrictEqual(["turn_start", "message_end:user", "message_end:assistant", "message_end:toolResult", "turn_start", "message_end:assistant"]);
  });

  it("may give the run another model and append messages after the prompts, before the first call", () => {
    const second = scriptedModel(["from the second model"], { id: "second" });
    const note = { role: "notice", text: "prepared", timestamp: 1 } as unknown as AgentMessage;
    const { events, model } = runSync({ prepareFirstTurn: () => ({ model: second, append: [note] }) });
    expect(model.calls).toHaveLength(0);
    expect(roles(second.calls[0]!.messages)).toStrictEqual(["user", "user"]);
    expect(roles(endOf(events).messages)).toStrictEqual(["user", "notice", "assistant"]);
    expect((endOf(events).messages[2] as { model: string }).model).toBe("second");
  });

  it("a throw, or an answer that is not an update, ends the run with an error message naming the hook; the model is not called", () => {
    for (const [hook, why] of [
      [
        () => {
          throw new Error("no budget");
        },
        "no budget",
      ],
      [() => "compact please", "it returned a string, not { context, model }"],
      [() => ({ append: "summary" }), "its append is a string, not an array of messages"],
    ] as const) {
      const { events, model } = runSync({ prepareFirstTurn: hook as never });
      expect(model.calls).toHaveLength(0);
      expect(endOf(events).messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: `prepareFirstTurn failed: ${why}` });
      expect(endOf(events).reason).toBe("failed");
    }
  });

  it(
    "an abort while it is pending ends the run at once with an aborted message",
    marbles((m) => {
      const model = scriptedModel(["never"]);
      const controller = new AbortController();
      m.scheduler.schedule(() => controller.abort(), 5);
      const events: AgentEvent[] = [];
      let endedAt = -1;
      agentLoop([userMessage("now")], { messages: [] }, { model, scheduler: m.scheduler, signal: controller.signal, prepareFirstTurn: () => NEVER }).subscribe((event) => {
        events.push(event);
        if (event.type === "agent_end") endedAt = m.scheduler.now();
      });
      m.flush();
      assertEventGrammar(events);
      expect([endedAt, model.calls.length, endOf(events).reason]).toStrictEqual([5, 0, "aborted"]);
      expect(endOf(events).messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
    }),
  );
});
