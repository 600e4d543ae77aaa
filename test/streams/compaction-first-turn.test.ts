import { filter, map, timer } from "rxjs";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { compaction } from "../../src/streams/compaction.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import type { AgentEvent, AgentMessage } from "../../src/types.js";
import { marbles } from "../helpers/marbles.js";
import { timeline } from "../helpers/timeline.js";
import { assistantMessage, text, userMessage } from "../testing/fixtures.js";

// A chat without tools is one turn per run: compaction must look before a run's first call too,
// or the session grows past the budget however small it is.

const answer = (input: number): ScriptedTurn => ({ content: [{ type: "text", text: `answer after ${input}` }], usage: { input, output: 100 } });
const summaryOf = (messages: readonly AgentMessage[]) => `summary of ${messages.map((message) => (message as { role: string }).role).join(",")}`;
/** A message as the model saw it: its role, or a user message's text (a summary's middle line). */
const seen = (message: { role: string; content?: unknown }) => (message.role === "user" ? (String(message.content).split("\n").at(-2) ?? String(message.content)) : message.role);

describe("compaction before a run's first call", () => {
  it("keeps a chat without tools under the budget: the prompt that would pass it is answered from a summary", async () => {
    // Run 2's call is estimated at 200 reported + its prompt: within 300. Run 3's at 350 + its prompt: past it.
    const model = scriptedModel([answer(100), answer(250), answer(150)]);
    const agent = new Agent({ model, ...compaction({ maxInputTokens: 300, keepRecent: 2, summarize: summaryOf }) });
    await agent.run("q1");
    await agent.run("q2");
    await agent.run("q3");
    expect(agent.state.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "user", "assistant", "user", "compactionSummary", "assistant"]);
    const promptTokens = Math.ceil(JSON.stringify(agent.state.messages[4]).length / 4);
    expect(agent.state.messages[5]).toMatchObject({ summary: "summary of user,assistant,user", keptMessages: 2, tokensBefore: 350 + promptTokens });
    expect(model.calls.map((call) => call.messages.map(seen))).toStrictEqual([["q1"], ["q1", "assistant", "q2"], ["summary of user,assistant,user", "assistant", "q3"]]);
  });

  it("never summarizes the run's own prompt, even with keepRecent 0", async () => {
    const model = scriptedModel([answer(400), answer(50)]);
    const agent = new Agent({ model, ...compaction({ maxInputTokens: 300, keepRecent: 0, summarize: summaryOf }) });
    await agent.run("q1");
    await agent.run("q2");
    expect(agent.state.messages[3]).toMatchObject({ role: "compactionSummary", summary: "summary of user,assistant", keptMessages: 1 });
    expect(model.calls[1]!.messages.map(seen)).toStrictEqual(["summary of user,assistant", "q2"]);
  });

  it("does nothing on a session's first prompt, whatever its size: there is nothing before it to summarize", async () => {
    let asked = 0;
    const agent = new Agent({ model: scriptedModel([answer(10)]), ...compaction({ maxInputTokens: 10, summarize: () => `${++asked}` }) });
    await agent.run("x".repeat(400));
    expect([asked, agent.state.messages.map((message) => message.role)]).toStrictEqual([0, ["user", "assistant"]]);
  });

  it(
    "announces the summary after the prompt, once the summarizer answered, before the model call",
    marbles((m) => {
      const earlier = [userMessage("q1"), { ...assistantMessage([text("a1")]), usage: { ...assistantMessage([]).usage, input: 500, output: 20 } }];
      const summarizer = (messages: readonly AgentMessage[]) => timer(20, m.scheduler).pipe(map(() => summaryOf(messages)));
      const model = scriptedModel(["a2"], { scheduler: m.scheduler, delay: 10 });
      const labels$ = agentLoop([userMessage("q2")], { messages: earlier }, {
        model,
        scheduler: m.scheduler,
        ...compaction({ maxInputTokens: 300, keepRecent: 1, summarize: summarizer, scheduler: m.scheduler }),
      }).pipe(
        filter((event) => event.type !== "message_update"),
        map((event: AgentEvent) => ("message" in event && event.type.startsWith("message_") ? `${event.type}:${(event.message as { role: string }).role}` : event.type)),
      );
      // The summarizer works 0..20; the reply streams its five events 10 frames apart, 30..70.
      m.expect(labels$).toBeObservable(
        ...timeline({
          0: ["agent_start", "turn_start", "message_start:user", "message_end:user"],
          20: ["message_start:compactionSummary", "message_end:compactionSummary"],
          30: ["message_start:assistant"],
          70: ["message_end:assistant", "turn_end", "agent_end"],
        }),
      );
      m.flush();
      expect(model.calls[0]!.messages.map(seen)).toStrictEqual(["summary of user,assistant", "q2"]);
      const summary = (model.calls[0]!.messages[0] as { content: string }).content;
      expect(summary).toMatch(/^The conversation so far was compacted/);
      // The caller's array is left as it was.
      expect(earlier).toHaveLength(2);
    }),
  );
});
