import { getModel } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { Agent, agentLoop, type AgentEvent, type AgentMessage } from "../../src/pi-agent-core/index.js";

// Bad input to the drop-in: a clear error as data, and nothing left waiting (docs/bad-input.md).

describe("rxagent/pi-agent-core with bad input", () => {
  it("agentLoop with a prompt that is no message ends its stream with a failed assistant message saying why", async () => {
    const stream = agentLoop([42 as unknown as AgentMessage], { systemPrompt: "", messages: [] }, { model: getModel("openai", "gpt-4o-mini"), convertToLlm: () => [] });
    const events: AgentEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual(["agent_end"]);
    const [failed] = await stream.result();
    expect(failed).toMatchObject({ role: "assistant", stopReason: "error" });
    expect((failed as { errorMessage: string }).errorMessage).toContain("prompts[0]");
  });

  it("a listener that throws ends the run as a failed assistant message; the agent is idle and takes the next prompt", async () => {
    const agent = new Agent({ streamFn: () => Promise.reject(new Error("no key")) });
    let throwOnce = true;
    agent.subscribe((event) => {
      if (event.type === "message_end" && throwOnce) {
        throwOnce = false;
        throw new Error("listener broke");
      }
    });
    await agent.prompt("Hello");
    expect(agent.state.isStreaming).toBe(false);
    expect(agent.state.errorMessage).toBe("listener broke");
    await agent.prompt("Again");
    expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "no key" });
  });
});
