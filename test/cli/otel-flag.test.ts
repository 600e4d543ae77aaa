import { describe, expect, it } from "vitest";
import { startCli } from "./cli-process.js";

describe("rxagent chat --otel (a real process on the demo model)", () => {
  it("prints the run's spans on stderr, the chat's output on stdout unchanged", async () => {
    const cli = startCli(["chat", "--json", "--otel", "--delay", "0"]);
    cli.child.stdin.end("what is 12*7\n");
    expect(await cli.exited).toBe(0);
    const spans = cli
      .stderr()
      .split("\n")
      .filter((line) => line.startsWith("span "));
    const names = spans.map((line) => line.split(" ").slice(1, 3).join(" "));
    expect(names.filter((name) => name.startsWith("chat "))).toHaveLength(2);
    expect(names.filter((name) => name === "execute_tool calculator")).toHaveLength(1);
    expect(names[names.length - 1]?.startsWith("invoke_agent")).toBe(true);
    const run = spans[spans.length - 1]!;
    const runId = /id=(\w+)/.exec(run)?.[1];
    expect(spans.slice(0, -1).every((line) => line.includes(`parent=${runId}`))).toBe(true);
    expect(cli.events().some((event) => event.type === "agent_end")).toBe(true);
  });
});
