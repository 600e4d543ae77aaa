import { describe, expect, it } from "vitest";
import { asyncScheduler, lastValueFrom } from "rxjs";
import { Agent, agentLoop, InvalidConfigError, InvalidStateError } from "../../src/index.js";
import type { AgentStatePatch, ThinkingLevel } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";

describe("Agent thinkingLevel: held by the agent, handed to each model call", () => {
  it("reaches every model call of the next run once replaced; unset, the model is told nothing", async () => {
    const model = scriptedModel(["one", "two", "three"]);
    const agent = new Agent({ model });
    await agent.run("hello");
    expect(agent.settings.thinkingLevel).toBeUndefined();
    agent.replaceState({ thinkingLevel: "high" });
    expect(agent.settings.thinkingLevel).toBe("high");
    await agent.run("think hard");
    agent.replaceState({ thinkingLevel: "off" });
    await agent.run("now don't");
    expect(model.thinkingLevels).toStrictEqual([undefined, "high", "off"]);
  });

  it("starts from the constructor's option and follows configure; the loop takes it from its config", async () => {
    const model = scriptedModel(["one", "two", "three"]);
    const agent = new Agent({ model, thinkingLevel: "low" });
    await agent.run("hello");
    agent.configure({ thinkingLevel: "xhigh" });
    await agent.run("again");
    await lastValueFrom(agentLoop([{ role: "user", content: "loop", timestamp: 0 }], { messages: [] }, { model, thinkingLevel: "minimal" }));
    expect(model.thinkingLevels).toStrictEqual(["low", "xhigh", "minimal"]);
  });

  it("is refused while a run is active: the run keeps the level it started with", async () => {
    const model = scriptedModel(["answer"], { scheduler: asyncScheduler, delay: 1 });
    const agent = new Agent({ model, thinkingLevel: "medium" });
    const run = agent.run("hello");
    expect(() => agent.replaceState({ thinkingLevel: "high" })).toThrow(InvalidStateError);
    await run;
    expect([model.thinkingLevels, agent.settings.thinkingLevel]).toStrictEqual([["medium"], "medium"]);
  });

  it("refuses a level that is not one of pi-agent-core's, naming the field, and changes nothing", () => {
    const model = scriptedModel([]);
    const agent = new Agent({ model, thinkingLevel: "low" });
    const expected = /thinkingLevel.*must be one of "off", "minimal", "low", "medium", "high", "xhigh", got/;
    for (const level of ["extreme", "HIGH", 3, null, ""]) {
      let refused: unknown;
      try {
        agent.replaceState({ thinkingLevel: level } as unknown as AgentStatePatch);
      } catch (error) {
        refused = error;
      }
      expect([refused instanceof InvalidConfigError && refused.field, expected.test(String(refused))]).toStrictEqual(["thinkingLevel", true]);
    }
    expect(agent.settings.thinkingLevel).toBe("low");
    expect(() => new Agent({ model, thinkingLevel: "max" as ThinkingLevel })).toThrow(expected);
    expect(() => agent.configure({ thinkingLevel: "max" as ThinkingLevel })).toThrow(expected);
  });

  it("travels in snapshot() and comes back with fromSnapshot, over the options' level", async () => {
    const agent = new Agent({ model: scriptedModel([]), thinkingLevel: "minimal" });
    agent.replaceState({ thinkingLevel: "high" });
    const snapshot = JSON.parse(JSON.stringify(agent.snapshot())) as ReturnType<Agent["snapshot"]>;
    const model = scriptedModel(["restored"]);
    const restored = Agent.fromSnapshot(snapshot, { model, thinkingLevel: "low" });
    await restored.run("hello");
    expect([snapshot.thinkingLevel, restored.settings.thinkingLevel, model.thinkingLevels]).toStrictEqual(["high", "high", ["high"]]);
    expect(() => Agent.fromSnapshot({ ...snapshot, thinkingLevel: "max" as ThinkingLevel }, { model })).toThrow(InvalidConfigError);
  });
});
