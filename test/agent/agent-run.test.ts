import { emptyUsage } from "../../src/types/messages.js";
import { describe, expect, it } from "vitest";
import { asyncScheduler, lastValueFrom, toArray } from "rxjs";
import { Agent, InvalidStateError } from "../../src/index.js";
import type { AgentEvent, AgentMessage } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";

/** role:text of each message, to compare transcripts at a glance. */
function summary(messages: readonly AgentMessage[]): string[] {
  return messages.map((message) => {
    const { role, content, stopReason } = message as { role: string; content: unknown; stopReason?: string };
    const text = typeof content === "string" ? content : (content as { type: string; text?: string }[]).map((block) => block.text ?? block.type).join("");
    return `${role}:${text}${stopReason && stopReason !== "stop" ? ` (${stopReason})` : ""}`;
  });
}

describe("Agent.run", () => {
  it("resolves with the messages the run added, the same as agent_end's, and runs again after", async () => {
    const agent = new Agent({ model: scriptedModel(["Hi there", "Bye"]) });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((event) => events.push(event));
    const first = await agent.run("Hello");
    expect(summary(first)).toStrictEqual(["user:Hello", "assistant:Hi there"]);
    expect(events.at(-1)).toStrictEqual({ type: "agent_end", messages: first, reason: "idle", usage: emptyUsage() });
    const second = await agent.run({ text: "Leaving" });
    expect(summary(second)).toStrictEqual(["user:Leaving", "assistant:Bye"]);
    expect(summary(agent.messages)).toStrictEqual([...summary(first), ...summary(second)]);
  });

  it("resolves when the model fails: the failure is the last message", async () => {
    const agent = new Agent({ model: scriptedModel([{ stopReason: "error", errorMessage: "rate limited" }]) });
    const messages = await agent.run("Hello");
    expect(summary(messages)).toStrictEqual(["user:Hello", "assistant: (error)"]);
    expect((messages[1] as { errorMessage?: string }).errorMessage).toBe("rate limited");
  });

  it("resolves when the run is aborted, with an aborted assistant message", async () => {
    const agent = new Agent({ model: scriptedModel(["Never finished"], { scheduler: asyncScheduler, delay: 1 }) });
    const run = agent.run("Hello");
    agent.abort();
    const messages = await run;
    expect(summary(messages).map((line) => line.replace(/assistant:.*\(/, "assistant:… ("))).toStrictEqual(["user:Hello", "assistant:… (aborted)"]);
    expect(agent.isRunning).toBe(false);
  });

  it("abort() drops queued steering and says what it dropped; follow-ups stay for the next run unless cleared", async () => {
    const agent = new Agent({ model: scriptedModel(["Never finished", "Second", "Third"], { scheduler: asyncScheduler, delay: 1 }) });
    const run = agent.run("Hello");
    agent.steer("steer me");
    agent.followUp("later one");
    expect(summary(agent.abort().steering)).toStrictEqual(["user:steer me"]);
    await run;
    expect([agent.state.queuedSteering, agent.state.queuedFollowUp]).toStrictEqual([0, 1]);
    agent.followUp("later two");
    const dropped = agent.abort({ clearFollowUps: true });
    expect([summary(dropped.steering), summary(dropped.followUp)]).toStrictEqual([[], ["user:later one", "user:later two"]]);
    expect(agent.state.queuedFollowUp).toBe(0);
  });

  it("rejects with an InvalidStateError while another run is active, and the active run goes on", async () => {
    const agent = new Agent({ model: scriptedModel(["First"], { scheduler: asyncScheduler, delay: 1 }) });
    const events = agent.prompt("One");
    await expect(agent.run("Two")).rejects.toThrow(InvalidStateError);
    const types = (await lastValueFrom(events.pipe(toArray()))).map((event) => event.type);
    expect(types.at(-1)).toBe("agent_end");
  });

  it("rejects when reset() stops the run before it ends", async () => {
    const agent = new Agent({ model: scriptedModel(["Never finished"], { scheduler: asyncScheduler, delay: 1 }) });
    const run = agent.run("Hello");
    agent.reset();
    await expect(run).rejects.toThrow(new InvalidStateError("The run was stopped by reset() or dispose() before it ended."));
  });
});
