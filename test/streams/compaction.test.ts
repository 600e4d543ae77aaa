import { Type } from "@sinclair/typebox";
import { filter, lastValueFrom, map, NEVER, type Observable, timer, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { InvalidConfigError } from "../../src/errors.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { compactedMessages } from "../../src/streams/compacted-messages.js";
import { compaction } from "../../src/streams/compaction.js";
import { scriptedModel, type ScriptedTurn } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentEvent, AgentMessage, AssistantMessage, CompactionSummaryMessage, PrepareNextTurnResult } from "../../src/types.js";
import { emptyUsage } from "../../src/types/messages.js";
import { marbles } from "../helpers/marbles.js";
import { timeline } from "../helpers/timeline.js";
import { assistantMessage, toolCall, toolResultMessage, userMessage } from "../testing/fixtures.js";

const read = defineTool({ name: "read", description: "Reads a page", parameters: Type.Object({ page: Type.Number() }), execute: (_id, { page }) => textResult(`page ${page}: ${"lorem ipsum ".repeat(40)}`) });
const callRead = (page: number): ScriptedTurn => ({ content: [{ type: "toolCall", id: `r${page}`, name: "read", arguments: { page } }], usage: { input: 50 * page, output: 10 } });

/** An event as a short label: its type, and the role of its message. */
function label(event: AgentEvent): string {
  return "message" in event && event.type.startsWith("message_") ? `${event.type}:${(event.message as { role: string }).role}` : event.type;
}

const summaryOf = (messages: readonly AgentMessage[]) => `summary of ${messages.length}: ${messages.map((message) => (message as { role: string }).role).join(",")}`;

describe("compaction, in virtual time with a scripted summarizer", () => {
  it(
    "summarizes the older messages once the next call would pass the budget, and the next call sees the summary and the kept messages",
    marbles((m) => {
      const model = scriptedModel([callRead(1), callRead(2), "Done"]);
      const summarizer = (messages: readonly AgentMessage[]) => timer(20, m.scheduler).pipe(map(() => summaryOf(messages)));
      const run$ = agentLoop([userMessage("Read two pages")], { messages: [], tools: [read] }, {
        model,
        scheduler: m.scheduler,
        ...compaction({ maxInputTokens: 150, keepRecent: 2, summarize: summarizer, scheduler: m.scheduler }),
      }).pipe(
        filter((event) => event.type !== "message_update"),
        map(label),
      );
      const toolTurn = ["message_start:assistant", "message_end:assistant", "tool_execution_start", "tool_execution_end", "message_start:toolResult", "message_end:toolResult", "turn_end"];
      m.expect(run$).toBeObservable(
        ...timeline({
          // Turn 1: 50 + 10 reported tokens and about 150 for the page: past 150, so the summarizer works 20 frames.
          0: ["agent_start", "turn_start", "message_start:user", "message_end:user", ...toolTurn],
          20: ["turn_start", "message_start:compactionSummary", "message_end:compactionSummary", ...toolTurn],
          // Turn 2 reported 100 + 10 and read another page: past the budget again, a second summary rolls up the first.
          40: ["turn_start", "message_start:compactionSummary", "message_end:compactionSummary", "message_start:assistant", "message_end:assistant", "turn_end", "agent_end"],
        }),
      );
      m.flush();
      const [, second, third] = model.calls.map((call) => call.messages.map((message) => (message.role === "user" ? `user: ${String(message.content).split("\n")[2] ?? message.content}` : message.role)));
      expect(second).toStrictEqual(["user: summary of 1: user", "assistant", "toolResult"]);
      expect(third).toStrictEqual(["user: summary of 3: compactionSummary,assistant,toolResult", "assistant", "toolResult"]);
    }),
  );

  it("leaves the transcript alone while the next call stays within the budget", async () => {
    const model = scriptedModel([callRead(1), "Done"]);
    let asked = 0;
    const events = await lastValueFrom(
      agentLoop([userMessage("Read")], { messages: [], tools: [read] }, { model, ...compaction({ maxInputTokens: 10_000, summarize: () => `${++asked}` }) }).pipe(toArray()),
    );
    expect([asked, events.filter((event) => event.type === "message_end").map((event) => label(event))]).toStrictEqual([0, ["message_end:user", "message_end:assistant", "message_end:toolResult", "message_end:assistant"]]);
  });
});

describe("compaction's cut", () => {
  const big = "x".repeat(2000);
  const transcript: AgentMessage[] = [
    userMessage("start"),
    assistantMessage([toolCall("a", "read"), toolCall("b", "read")]),
    toolResultMessage(toolCall("a", "read"), big),
    toolResultMessage(toolCall("b", "read"), big),
  ];
  const lastAnswer = transcript[1] as AssistantMessage;

  async function compact(keepRecent: number, messages = transcript): Promise<PrepareNextTurnResult | undefined> {
    const summarized: AgentMessage[][] = [];
    const hooks = compaction({ maxInputTokens: 100, keepRecent, summarize: (older) => (summarized.push([...older]), "S") , scheduler: { now: () => 7 } as never });
    return lastValueFrom(hooks.prepareNextTurn({ message: lastAnswer, toolResults: [], context: { messages }, newMessages: [] }));
  }

  it("never keeps a tool result without its call: the cut moves back to the call", async () => {
    const update = await compact(1);
    expect(update?.append).toStrictEqual([{ role: "compactionSummary", summary: "S", keptMessages: 3, tokensBefore: expect.any(Number), timestamp: 7 }]);
    const after = [...transcript, ...update!.append!];
    expect(compactedMessages(after).slice(1)).toStrictEqual(transcript.slice(1));
  });

  it("does nothing when everything left is the kept messages and their calls", async () => {
    expect(await compact(3, transcript.slice(1))).toBeUndefined();
  });

  it("keeps nothing with keepRecent 0: the summary stands for the whole transcript", async () => {
    const update = await compact(0);
    expect((update!.append![0] as unknown as CompactionSummaryMessage).keptMessages).toBe(0);
    expect(compactedMessages([...transcript, ...update!.append!]).map((message) => message.role)).toStrictEqual(["user"]);
  });

  it("estimates from the messages themselves when the last answer reported no usage", async () => {
    expect({ ...lastAnswer.usage }).toStrictEqual(emptyUsage());
    expect(((await compact(1))!.append![0] as unknown as CompactionSummaryMessage).tokensBefore).toBeGreaterThan(1000);
  });
});

describe("compaction's failures", () => {
  async function endOf(summarize: Parameters<typeof compaction>[0]["summarize"], signal?: AbortSignal): Promise<AgentEvent[]> {
    const model = scriptedModel([callRead(1), "Done"]);
    return lastValueFrom(agentLoop([userMessage("Read")], { messages: [], tools: [read] }, { model, signal, ...compaction({ maxInputTokens: 50, keepRecent: 0, summarize }) }).pipe(toArray()));
  }

  it("a summarizer that throws ends the run with an error message naming compaction, and loses no message", async () => {
    const events = await endOf(() => {
      throw new Error("summarizer offline");
    });
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    const failed = end.messages.at(-1) as AssistantMessage;
    expect([end.reason, failed.stopReason, failed.errorMessage]).toStrictEqual(["failed", "error", "prepareNextTurn failed: compaction's summarizer failed: summarizer offline"]);
    expect(end.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "toolResult", "assistant"]);
  });

  // Its text was made with String(error), which threw inside the summarizer's error handler: the
  // run never ended.
  it("a summarizer that fails with a value that cannot be read as text still ends the run, as failed", async () => {
    const unreadable = {
      toString(): string {
        throw new Error("no text");
      },
    };
    const events = await endOf(() => {
      throw unreadable;
    });
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect([end.reason, (end.messages.at(-1) as AssistantMessage).errorMessage]).toStrictEqual(["failed", "prepareNextTurn failed: compaction's summarizer failed: {}"]);
  });

  it("a summarizer that answers no text is a failure too", async () => {
    const end = (await endOf(() => "  ")).at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect((end.messages.at(-1) as AssistantMessage).errorMessage).toBe('prepareNextTurn failed: compaction\'s summarizer answered an empty text, not a summary text');
  });

  it("aborting while it summarizes fires the summarizer's signal and ends the run as aborted", async () => {
    const controller = new AbortController();
    let summarizerSignal: AbortSignal | undefined;
    const events = await endOf((_messages, signal): Observable<string> => {
      summarizerSignal = signal;
      queueMicrotask(() => controller.abort());
      return NEVER;
    }, controller.signal);
    expect([summarizerSignal?.aborted, (events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>).reason]).toStrictEqual([true, "aborted"]);
  });

  it("refuses options that cannot work, with an InvalidConfigError", () => {
    expect(() => compaction({ maxInputTokens: 0, summarize: () => "" })).toThrow(new InvalidConfigError("maxInputTokens", "compaction needs a positive token budget, got 0."));
    expect(() => compaction({ maxInputTokens: 10, keepRecent: -1, summarize: () => "" })).toThrow(new InvalidConfigError("keepRecent", "must be an integer of 0 or more, got -1."));
    expect(() => compaction({ maxInputTokens: 10, summarize: "gpt" as never })).toThrow(new InvalidConfigError("summarize", 'must be a Model or a function (messages, signal) => summary, got a string.'));
  });
});

describe("compaction with a model as summarizer", () => {
  it("sends the older messages as one text and takes the answer's text as the summary", async () => {
    const summarizer = scriptedModel(["The user asked to read; page 1 said lorem ipsum."]);
    const model = scriptedModel([callRead(1), "Done"]);
    const events = await lastValueFrom(
      agentLoop([userMessage("Read page one")], { messages: [], tools: [read] }, { model, ...compaction({ maxInputTokens: 50, keepRecent: 0, summarize: summarizer, instructions: "Summarize." }) }).pipe(toArray()),
    );
    expect(summarizer.calls).toStrictEqual([
      { systemPrompt: "Summarize.", messages: [{ role: "user", content: expect.stringMatching(/^\[User\]\nRead page one\n\n\[Assistant\]\n\(calls read \{"page":1\}\)\n\n\[Result of read\]\npage 1: lorem/), timestamp: expect.any(Number) }] },
    ]);
    const summary = events.find((event) => event.type === "message_end" && event.message.role === ("compactionSummary" as never));
    expect(summary && "message" in summary && (summary.message as unknown as CompactionSummaryMessage).summary).toBe("The user asked to read; page 1 said lorem ipsum.");
  });
});

describe("prepareNextTurn's append (what compaction stands on)", () => {
  async function messagesOf(append: unknown): Promise<AgentEvent[]> {
    const model = scriptedModel([callRead(1), "Done"]);
    return lastValueFrom(agentLoop([userMessage("Read")], { messages: [], tools: [read] }, { model, prepareNextTurn: () => ({ append }) as never }).pipe(toArray()));
  }

  it("announces the appended messages after turn_start, before the model call", async () => {
    const note = { role: "notice", text: "compacted", timestamp: 1 } as unknown as AgentMessage;
    const events = await messagesOf([note]);
    expect(events.filter((event) => event.type !== "message_update").map(label).slice(11)).toStrictEqual([
      "turn_start",
      "message_start:notice",
      "message_end:notice",
      "message_start:assistant",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    expect((events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>).messages).toContain(note);
  });

  it("refuses an append that is not an array of messages, and the run ends saying so", async () => {
    for (const [append, problem] of [
      ["summary", 'its append is a string, not an array of messages'],
      [[{ text: "no role" }], "its append[0] is an object, not a message with a role"],
    ] as const) {
      const end = (await messagesOf(append)).at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
      expect((end.messages.at(-1) as AssistantMessage).errorMessage).toBe(`prepareNextTurn failed: ${problem}`);
    }
  });
});

describe("compactedMessages (what the model sees)", () => {
  const summary = (keptMessages: unknown) => ({ role: "compactionSummary", summary: "S", keptMessages, tokensBefore: 1, timestamp: 5 }) as unknown as AgentMessage;
  const [a, b, c] = [userMessage("a"), userMessage("b"), userMessage("c")];

  it("shows the summary as a user message, the kept messages before it and what follows", () => {
    expect(compactedMessages([a, b, summary(1), c])).toStrictEqual([{ role: "user", content: "The conversation so far was compacted. Its summary:\n<summary>\nS\n</summary>", timestamp: 5 }, b, c]);
  });

  it("reads a stored keptMessages that is not a positive integer as 0, without throwing", () => {
    for (const kept of [-3, "2", null, 1.5]) expect(compactedMessages([a, b, summary(kept), c]).slice(1)).toStrictEqual([c]);
  });
});
