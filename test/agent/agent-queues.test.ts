import { describe, expect, it } from "vitest";
import { lastValueFrom, toArray } from "rxjs";
import { Agent } from "../../src/index.js";
import type { AgentMessage } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";

const texts = (messages: readonly AgentMessage[]): unknown[] => messages.map((message) => (message as { content: unknown }).content);

describe("Agent's queues, cleared one at a time (pi-agent-core's clearSteeringQueue, clearFollowUpQueue, clearAllQueues, hasQueuedMessages)", () => {
  it("clearSteering drops only the steering and returns it; the follow-ups stay and still run", async () => {
    const model = scriptedModel(["first", "second"]);
    const agent = new Agent({ model });
    agent.steer("steer one");
    agent.steer("steer two");
    agent.followUp("follow");
    expect(agent.hasQueuedMessages()).toBe(true);
    expect(texts(agent.clearSteering())).toStrictEqual(["steer one", "steer two"]);
    expect([agent.state.queuedSteering, agent.state.queuedFollowUp]).toStrictEqual([0, 1]);
    expect(agent.hasQueuedMessages()).toBe(true);
    await agent.run("hello");
    expect(texts(agent.messages.filter((message) => message.role === "user"))).toStrictEqual(["hello", "follow"]);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("clearFollowUps drops only the follow-ups and returns them; the steering stays and still runs", async () => {
    const model = scriptedModel(["first"]);
    const agent = new Agent({ model });
    agent.steer("steer");
    agent.followUp("follow one");
    agent.followUp("follow two");
    expect(texts(agent.clearFollowUps())).toStrictEqual(["follow one", "follow two"]);
    expect([agent.state.queuedSteering, agent.state.queuedFollowUp]).toStrictEqual([1, 0]);
    await agent.run("hello");
    expect(texts(agent.messages.filter((message) => message.role === "user"))).toStrictEqual(["hello", "steer"]);
    expect(model.calls).toHaveLength(1);
  });

  it("clearAllQueues drops both and says what it dropped; hasQueuedMessages is false after, and on an agent never steered", () => {
    const agent = new Agent({ model: scriptedModel([]) });
    expect(agent.hasQueuedMessages()).toBe(false);
    expect(agent.clearSteering()).toStrictEqual([]);
    expect(agent.clearFollowUps()).toStrictEqual([]);
    agent.steer("steer");
    agent.followUp("follow");
    const dropped = agent.clearAllQueues();
    expect([texts(dropped.steering), texts(dropped.followUp)]).toStrictEqual([["steer"], ["follow"]]);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("hasQueuedMessages tells a caller when continue() has something to deliver after a run (pi's coding agent does this)", async () => {
    const model = scriptedModel(["answer", "later"]);
    const agent = new Agent({ model });
    await agent.run("hello");
    expect(agent.hasQueuedMessages()).toBe(false);
    agent.followUp("one more");
    expect(agent.hasQueuedMessages()).toBe(true);
    await lastValueFrom(agent.continue().pipe(toArray()));
    expect(agent.hasQueuedMessages()).toBe(false);
    expect(texts(agent.messages.filter((message) => message.role === "user"))).toStrictEqual(["hello", "one more"]);
  });
});
