import { describe, expect, it } from "vitest";
import { paintAll } from "../../src/cli/ansi.js";
import { formatArguments, initialRenderState, type RenderState, renderEvent, statusLine, summarizeResult } from "../../src/cli/terminal-renderer.js";
import { TerminalScreen } from "../../src/cli/terminal-screen.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AgentEvent, AgentMessage, AssistantMessage, ModelEvent } from "../../src/types.js";
import { runUsage } from "../../src/model/run-usage.js";

const assistant = (content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"] = "stop", errorMessage?: string): AssistantMessage => ({
  role: "assistant",
  content,
  api: "test",
  provider: "test",
  model: "test",
  usage: { ...emptyUsage(), input: 10, output: 5 },
  stopReason,
  timestamp: 0,
  ...(errorMessage ? { errorMessage } : {}),
});
const update = (assistantMessageEvent: ModelEvent): AgentEvent => ({ type: "message_update", message: assistant([]), assistantMessageEvent });
const partial = assistant([]);

function render(events: AgentEvent[], echoPrompt = true): { text: string; state: RenderState } {
  let state = initialRenderState;
  let text = "";
  for (const event of events) {
    const rendered = renderEvent(state, event, { echoPrompt });
    state = rendered.state;
    text += paintAll(rendered.output, false);
  }
  return { text, state };
}

describe("renderEvent", () => {
  it("renders a run: prompt, dimmed thinking, streamed text, tools with results, injected steering, usage", () => {
    const reply = assistant([{ type: "toolCall", id: "1", name: "calculator", arguments: { expression: "1+2" } }], "toolUse");
    const events: AgentEvent[] = [
      { type: "agent_start" },
      { type: "turn_start" },
      { type: "message_start", message: { role: "user", content: "what is 1+2", timestamp: 0 } },
      { type: "message_end", message: { role: "user", content: "what is 1+2", timestamp: 0 } },
      { type: "message_start", message: partial },
      update({ type: "thinking_start", contentIndex: 0, partial }),
      update({ type: "thinking_delta", contentIndex: 0, delta: "arithmetic", partial }),
      update({ type: "thinking_end", contentIndex: 0, content: "arithmetic", partial }),
      update({ type: "text_start", contentIndex: 1, partial }),
      update({ type: "text_delta", contentIndex: 1, delta: "Let me ", partial }),
      update({ type: "text_delta", contentIndex: 1, delta: "check.", partial }),
      update({ type: "text_end", contentIndex: 1, content: "Let me check.", partial }),
      { type: "message_end", message: reply },
      { type: "tool_execution_start", toolCallId: "1", toolName: "calculator", args: { expression: "1+2" } },
      { type: "tool_execution_end", toolCallId: "1", toolName: "calculator", result: { content: [{ type: "text", text: "1+2 = 3" }], details: {} }, isError: false },
      { type: "turn_end", message: reply, toolResults: [] },
      { type: "turn_start" },
      { type: "message_start", message: { role: "user", content: "and the time?", timestamp: 0 } },
      { type: "message_end", message: { role: "user", content: "and the time?", timestamp: 0 } },
      { type: "agent_end", messages: [reply, assistant([])] },
    ];
    const { text, state } = render(events);
    expect(text).toBe(
      [
        "› what is 1+2",
        "thinking: arithmetic",
        "Let me check.",
        '⚙ calculator expression="1+2"',
        "  ✓ 1+2 = 3",
        "↳ you: and the time?",
        "· 2 model calls · 20 in / 10 out tokens",
        "",
      ].join("\n"),
    );
    expect(state.phase).toBe("idle");
  });

  it("sums the run's usage from agent_end.usage, a tool's own tokens and cost included", () => {
    const toolUsage = { ...emptyUsage(), input: 100, output: 20, totalTokens: 120, cost: { ...emptyUsage().cost, total: 0.5 } };
    const search: AgentMessage = { role: "toolResult", toolCallId: "s", toolName: "search", content: [], isError: false, usage: toolUsage, timestamp: 0 };
    const messages = [assistant([]), search];
    const { text } = render([{ type: "agent_end", messages, usage: runUsage(messages) }]);
    expect(text).toBe("· 1 model call · 110 in / 25 out tokens · $0.5000\n");
  });

  it("leaves the prompt out when the terminal already shows it", () => {
    const { text } = render([{ type: "agent_start" }, { type: "message_start", message: { role: "user", content: "hi", timestamp: 0 } }], false);
    expect(text).toBe("");
  });

  it("reports aborted and failed replies, and failed tools", () => {
    expect(render([{ type: "message_end", message: assistant([], "aborted", "Request was aborted") }]).text).toBe("⏹ aborted\n");
    expect(render([{ type: "message_end", message: assistant([], "error", "401 Unauthorized") }]).text).toBe("✗ model error: 401 Unauthorized\n");
    const failed: AgentEvent = { type: "tool_execution_end", toolCallId: "1", toolName: "read_file", result: { content: [{ type: "text", text: "outside the sandbox" }], details: {} }, isError: true };
    expect(render([failed]).text).toBe("  ✗ read_file: outside the sandbox\n");
  });

  it("tracks running tools and their progress for the status line", () => {
    const { state } = render([
      { type: "agent_start" },
      { type: "tool_execution_start", toolCallId: "1", toolName: "calculator", args: {} },
      { type: "tool_execution_start", toolCallId: "2", toolName: "clock", args: {} },
      { type: "tool_execution_update", toolCallId: "1", toolName: "calculator", args: {}, partialResult: { content: [{ type: "text", text: "3 + 4 = 7" }], details: {} } },
    ]);
    expect(statusLine(state, 1, { queuedSteering: 1, queuedFollowUp: 0 })).toBe(
      "⠙ calculator: 3 + 4 = 7 · clock · 1 steering queued  (type to steer · /later to queue · Ctrl-C aborts)",
    );
    expect(statusLine(initialRenderState, 0, { queuedSteering: 0, queuedFollowUp: 0 })).toBeUndefined();
  });

  it("prints a sub-agent's steps folded and indented under its call, a sub-agent of it one level deeper", () => {
    const nested = (event: AgentEvent, depth = 1, agent = "researcher"): AgentEvent => ({
      type: "tool_execution_update",
      toolCallId: "r1",
      toolName: "researcher",
      args: {},
      partialResult: { content: [], details: { type: "sub_agent_event", agent, depth, event } },
    });
    const { text, state } = render([
      { type: "agent_start" },
      { type: "tool_execution_start", toolCallId: "r1", toolName: "researcher", args: { task: "read a.md" } },
      nested({ type: "turn_start" }),
      nested(update({ type: "text_delta", contentIndex: 0, delta: "Let me", partial })),
      nested({ type: "tool_execution_start", toolCallId: "n1", toolName: "read_file", args: { path: "a.md" } }),
      nested(nested({ type: "tool_execution_end", toolCallId: "m1", toolName: "clock", result: { content: [{ type: "text", text: "noon" }], details: {} }, isError: false }, 2, "timer"), 1),
      nested({ type: "tool_execution_end", toolCallId: "n1", toolName: "read_file", result: { content: [{ type: "text", text: "gone" }], details: {} }, isError: true }),
      nested({ type: "message_end", message: assistant([{ type: "text", text: "a.md is empty." }]) }),
    ]);
    expect(text).toBe(
      [
        '⚙ researcher task="read a.md"',
        '  │ researcher ⚙ read_file path="a.md"',
        "    │ timer ✓ noon",
        "  │ researcher ✗ read_file: gone",
        "  │ researcher › a.md is empty.",
        "",
      ].join("\n"),
    );
    expect(state.runningTools.get("r1")).toStrictEqual({ name: "researcher", progress: "researcher: read_file" });
  });

  it("summarizes results from details and shortens arguments", () => {
    expect(summarizeResult("list_files", { content: [], details: { path: "src", entries: [{}, {}], omitted: 0 } })).toBe("src: 2 entries");
    expect(summarizeResult("read_file", { content: [], details: { path: "a.md", lines: 3, bytes: 40, truncated: true } })).toBe("a.md · 3 lines · 40 bytes (cut)");
    expect(formatArguments({ path: "x".repeat(200) })).toHaveLength(100);
    expect(formatArguments({ a: 1, b: "two" })).toBe('a=1 b="two"');
  });
});

describe("TerminalScreen", () => {
  it("writes straight through when not live", () => {
    let written = "";
    const screen = new TerminalScreen({ write: (text) => (written += text) }, { live: false, color: false });
    screen.write([{ text: "hello ", style: "plain" }, { text: "world\n", style: "dim" }]);
    screen.setStatus("⠋ working");
    expect(written).toBe("hello world\n");
  });

  it("keeps the unfinished line and the status line at the bottom, wrapping at the width", () => {
    let written = "";
    const screen = new TerminalScreen({ write: (text) => (written += text), columns: 21 }, { live: true, color: false });
    screen.setStatus("status");
    screen.write([{ text: "one two three four five six", style: "plain" }]);
    // Erase the status row, write the wrapped line, draw the rest and the status again.
    expect(written).toBe("status\r\u001b[2Kone two three four \nfive six\nstatus");
    screen.close();
    expect(written.endsWith("\r\u001b[2K\u001b[1A\r\u001b[2Kfive six\n")).toBe(true);
  });

  it("wraps wide characters by their columns: a row of 20 columns holds ten CJK characters", () => {
    let written = "";
    const screen = new TerminalScreen({ write: (text) => (written += text), columns: 21 }, { live: true, color: false });
    screen.write([{ text: "漢字漢字漢字漢字漢字漢字", style: "plain" }]);
    expect(written).toBe("漢字漢字漢字漢字漢字\n漢字");
    written = "";
    // A wide character that would straddle the last column starts the next row.
    screen.write([{ text: "abcdefghijklmno👍🏽👍🏽", style: "plain" }]);
    expect(written).toBe("\r\u001b[2K漢字abcdefghijklmno\n👍🏽👍🏽");
  });

  it("passes no escape sequence of a reply or a status to the terminal, live or not", () => {
    const hostile = "hi\u001b]0;pwned\u0007 there\u001b[2J\u009b2J\n";
    let piped = "";
    new TerminalScreen({ write: (text) => (piped += text) }, { live: false, color: false }).write([{ text: hostile, style: "plain" }]);
    expect(piped).toBe("hi there2J\n");
    let written = "";
    const screen = new TerminalScreen({ write: (text) => (written += text), columns: 41 }, { live: true, color: true });
    screen.write([{ text: hostile, style: "plain" }]);
    screen.setStatus("⠋ \u001b[1;1Hprogress");
    screen.lineEntered([{ text: "› typed\u001b[2J", style: "user" }]);
    expect(written).toBe("hi there2J\n\u001b[2m⠋ progress\u001b[0m\u001b[1A\r\u001b[2K\u001b[1;34m› typed\u001b[0m\n\u001b[2m⠋ progress\u001b[0m");
  });
});

