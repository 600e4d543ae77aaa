import { describe, expect, it } from "vitest";
import { assertEventGrammar } from "../../src/testing/index.js";
import type { AgentEvent, AgentMessage, AssistantMessage } from "../../src/types.js";
import { runsOf, startCli } from "./cli-process.js";

const textOf = (message: AgentMessage): string => {
  const content = (message as { content: unknown }).content;
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string }[]).map((part) => part.text ?? "").join("");
};
const ended = (events: AgentEvent[]) =>
  events.filter((event): event is Extract<AgentEvent, { type: "message_end" }> => event.type === "message_end").map((event) => event.message);

describe("rxagent chat (a real process on the demo model)", () => {
  it("answers a calculation through the calculator and exits 0 at end of input", async () => {
    const cli = startCli(["chat", "--delay", "0"]);
    cli.child.stdin.end("what is 12*7\n");
    expect(await cli.exited).toBe(0);
    const lines = cli.stdout().trimEnd().split("\n");
    expect(lines[0]).toMatch(/^rxagent · the offline demo model/);
    expect(lines.slice(1)).toStrictEqual([
      "› what is 12*7",
      'thinking: "12*7" is arithmetic → calculator.',
      "Let me use the calculator tool.",
      '⚙ calculator expression="12*7"',
      "  ✓ 12*7 = 84",
      "12*7 = 84.",
      expect.stringMatching(/^· 2 model calls · \d+ in \/ \d+ out tokens$/),
    ]);
  });

  it("--json prints only events, well formed, with parallel tool calls in one reply", async () => {
    // A little delay, so the calculator is still running when the clock starts.
    const cli = startCli(["chat", "--json", "--delay", "1"]);
    cli.child.stdin.end("what is 12*7 and what time is it\n");
    expect(await cli.exited).toBe(0);
    const events = cli.events();
    expect(cli.stderr()).toMatch(/offline demo model/);
    const [run] = runsOf(events);
    assertEventGrammar(run ?? []);
    const firstReply = ended(events).find((message) => (message as AssistantMessage).role === "assistant") as AssistantMessage;
    expect(firstReply.content.filter((block) => block.type === "toolCall").map((block) => block.type === "toolCall" && block.name)).toStrictEqual(["calculator", "clock"]);
    const toolEvents = events.filter((event) => event.type.startsWith("tool_execution_") && event.type !== "tool_execution_update").map((event) => event.type);
    expect(toolEvents.slice(0, 2)).toStrictEqual(["tool_execution_start", "tool_execution_start"]);
    const answer = ended(events).at(-1) as AssistantMessage;
    expect(textOf(answer)).toMatch(/^Here is what I found:\n- 12\*7 = 84\.\n- It is \d\d:\d\d:\d\d on /);
  });

  it("/cancel cancels the running tool call: its result says so, and the run goes on to a reply", async () => {
    // Each calculator step takes 6 x 100 ms: time enough to cancel it.
    const cli = startCli(["chat", "--json", "--delay", "100"]);
    cli.child.stdin.write("what is (1+2)*(3+4)\n");
    await cli.waitFor((stdout) => stdout.includes('"tool_execution_start"'));
    cli.child.stdin.write("/cancel 5\n");
    cli.child.stdin.end("/cancel\n");
    expect(await cli.exited).toBe(0);
    const events = cli.events();
    const [run] = runsOf(events);
    assertEventGrammar(run ?? []);
    const ends = events.filter((event): event is Extract<AgentEvent, { type: "tool_execution_end" }> => event.type === "tool_execution_end");
    expect(ends.map((event) => [event.toolName, event.isError, (event.result as { content: unknown }).content])).toStrictEqual([
      ["calculator", true, [{ type: "text", text: "Tool call was cancelled: cancelled in the chat" }]],
    ]);
    expect(cli.stderr()).toContain("This run has no tool call #5 (it has 1).");
    expect(events.at(-1)).toMatchObject({ type: "agent_end" });
  });

  it("injects a line typed mid-run as steering before the next model call, and the reply reacts", async () => {
    // The line goes in as the first reply starts streaming, so it has the rest of that reply and
    // three calculator steps of 6 x 40 ms (about 1 s) to arrive before the run asks the model
    // again. At 5 ms per token, sent once the tool started, it had 90 ms: under CI's load the
    // run ended first and the line became a second run.
    const cli = startCli(["chat", "--json", "--delay", "40"]);
    cli.child.stdin.write("what is (1+2)*(3+4)\n");
    await cli.waitFor((stdout) => stdout.includes('"text_delta"'));
    cli.child.stdin.end("also what time is it\n");
    expect(await cli.exited).toBe(0);
    const events = cli.events();
    const runs = runsOf(events);
    expect(runs).toHaveLength(1);
    assertEventGrammar(runs[0] ?? []);
    const transcript = ended(events).map((message) => `${(message as { role: string }).role}: ${textOf(message)}`);
    expect(transcript).toStrictEqual([
      "user: what is (1+2)*(3+4)",
      "assistant: Let me use the calculator tool.",
      "toolResult: (1+2)*(3+4) = 21",
      "user: also what time is it",
      'assistant: You said: "also what time is it" — So far: (1+2)*(3+4) = 21. Let me use the clock tool.',
      expect.stringMatching(/^toolResult: It is /),
      expect.stringMatching(/^assistant: It is /),
    ]);
  });

  it("aborts the run on SIGINT, keeps going, and exits cleanly on a second SIGINT", async () => {
    const cli = startCli(["chat", "--json", "--delay", "20"]);
    cli.child.stdin.write("tell me a long story\n");
    await cli.waitFor((stdout) => stdout.includes('"text_delta"'));
    cli.child.kill("SIGINT");
    await cli.waitFor((stdout) => stdout.includes('"agent_end"'));
    const [aborted] = runsOf(cli.events());
    assertEventGrammar(aborted ?? []);
    expect((ended(aborted ?? []).at(-1) as AssistantMessage).stopReason).toBe("aborted");
    // Still alive: the next line is a new prompt.
    cli.child.stdin.write("what is 2+2\n");
    await cli.waitFor((stdout) => stdout.split('"agent_end"').length === 3);
    expect(textOf(ended(runsOf(cli.events())[1] ?? []).at(-1) as AgentMessage)).toBe("2+2 = 4.");
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(0);
  });

  it("Ctrl-C says what it dropped from the queues, and the dropped follow-up never runs", async () => {
    const cli = startCli(["chat", "--json", "--delay", "20"]);
    cli.child.stdin.write("tell me a long story\n/later what is 2+2\n");
    await cli.waitFor((stdout) => stdout.includes('"text_delta"'));
    cli.child.kill("SIGINT");
    await cli.waitFor((stdout) => stdout.includes('"agent_end"'));
    cli.child.stdin.end();
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toContain("Dropped 1 queued follow-up.\n");
    expect(runsOf(cli.events())).toHaveLength(1);
  });

  it("after an abort, end of input exits 0", async () => {
    const cli = startCli(["chat", "--delay", "20"]);
    cli.child.stdin.write("tell me a long story\n");
    await cli.waitFor((stdout) => stdout.includes("I can't"));
    cli.child.kill("SIGINT");
    await cli.waitFor((stdout) => stdout.includes("⏹ aborted"));
    cli.child.stdin.end();
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toMatch(/⏹ aborted\n· 1 model call/);
    // The reply streamed words before the abort: the summary counts them.
    const outTokens = Number(/· 1 model call · \d+ in \/ (\d+) out tokens/.exec(cli.stdout())?.[1]);
    expect(outTokens).toBeGreaterThan(0);
  });

  it("/later queues a follow-up handled after the current request", async () => {
    const cli = startCli(["chat", "--json", "--delay", "5"]);
    cli.child.stdin.write("what is 6*7\n");
    await cli.waitFor((stdout) => stdout.includes('"text_delta"'));
    cli.child.stdin.end("/later what time is it\n");
    expect(await cli.exited).toBe(0);
    const transcript = ended(cli.events()).map((message) => `${(message as { role: string }).role}: ${textOf(message)}`);
    expect(transcript.slice(0, 5)).toStrictEqual([
      "user: what is 6*7",
      "assistant: Let me use the calculator tool.",
      "toolResult: 6*7 = 42",
      "assistant: 6*7 = 42.",
      "user: what time is it",
    ]);
  });

  it("prints usage with --help and refuses unknown options", async () => {
    const help = startCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toMatch(/^rxagent: LLM agents as a reactive stream/);
    const wrong = startCli(["chat", "--nope"]);
    expect(await wrong.exited).toBe(2);
    expect(wrong.stderr()).toMatch(/Unknown option '--nope'[\s\S]*--help/);
  });
});
