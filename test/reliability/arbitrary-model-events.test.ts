/**
 * Whatever a model sends (arbitrary-model.ts), the run ends as data: no Observable error, a
 * well-formed event sequence ending in `agent_end`, one result per tool call of every final
 * message, and nothing left running (the model and tool answer synchronously, so the run must end
 * within `subscribe`).
 *
 * The cases edge-failures.test.ts names one by one, drawn at random and mixed (property-based).
 */
import { Type } from "@sinclair/typebox";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent } from "../../src/types.js";
import { expectOneResultPerToolCall, userMessage } from "../testing/fixtures.js";
import { arbitraryModel, reply } from "./arbitrary-model.js";

const tool = defineTool({ name: "work", description: "Work.", parameters: Type.Object({ n: Type.Number() }), execute: (_toolCallId, args) => textResult(String(args.n)) });

describe("a model that sends arbitrary events (property-based)", () => {
  it("ends every run as data, with agent_end, and answers every tool call of every final message once", () => {
    fc.assert(
      fc.property(fc.array(reply, { minLength: 1, maxLength: 4 }), (replies) => {
        const events: AgentEvent[] = [];
        const errors: unknown[] = [];
        let completed = false;
        agentLoop([userMessage("go")], { systemPrompt: "", messages: [], tools: [tool] }, { model: arbitraryModel(replies), maxTurns: 8 }).subscribe({
          next: (sent) => events.push(sent),
          error: (error: unknown) => errors.push(error),
          complete: () => (completed = true),
        });
        expect(errors).toStrictEqual([]);
        expect(completed).toBe(true);
        expect(events.at(-1)?.type).toBe("agent_end");
        expectOneResultPerToolCall(events);
        // What a provider's next request and every client read from the transcript.
        for (const event of events) {
          if (event.type !== "message_end" || event.message.role !== "assistant") continue;
          expect(["string", "undefined"]).toContain(typeof event.message.errorMessage);
          for (const block of event.message.content) if (block.type === "toolCall") expect([typeof block.id, block.id !== "", typeof block.name]).toStrictEqual(["string", true, "string"]);
        }
      }),
      { numRuns: 400 },
    );
  });
});
