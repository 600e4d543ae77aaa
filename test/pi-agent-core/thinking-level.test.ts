import { describe, expect, it } from "vitest";
import { Agent } from "../../src/pi-agent-core/index.js";

describe("rxagent/pi-agent-core's state.thinkingLevel", () => {
  it("reaches streamFn as reasoning on the next prompt, as the reference sends it (\"off\": none)", async () => {
    const sent: unknown[] = [];
    const agent = new Agent({
      initialState: { thinkingLevel: "low" },
      streamFn: (_model, _context, options) => {
        sent.push(options?.reasoning);
        return Promise.reject(new Error("no key"));
      },
    });
    await agent.prompt("one");
    agent.state.thinkingLevel = "high";
    await agent.prompt("two");
    agent.state.thinkingLevel = "off";
    await agent.prompt("three");
    expect([sent, agent.state.thinkingLevel]).toStrictEqual([["low", "high", undefined], "off"]);
  });
});
