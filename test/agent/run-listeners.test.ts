import { describe, expect, it } from "vitest";
import { asyncScheduler } from "rxjs";
import { Agent } from "../../src/index.js";
import type { AgentEvent } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";

/** A Promise and the function that resolves it: a listener's work that the test finishes. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe("Agent.subscribe: listeners awaited as pi-agent-core awaits them", () => {
  it("run() resolves only after an async listener finished its work on agent_end", async () => {
    const agent = new Agent({ model: scriptedModel(["answer"]) });
    const log: string[] = [];
    const work = gate();
    const heard = gate();
    agent.subscribe(async (event) => {
      if (event.type !== "agent_end") return;
      heard.open();
      await work.promise;
      log.push("listener done");
    });
    const run = agent.run("hello").then(() => log.push("run resolved"));
    await heard.promise;
    log.push("listener still working");
    expect(agent.isRunning).toBe(false);
    work.open();
    await run;
    expect(log).toStrictEqual(["listener still working", "listener done", "run resolved"]);
  });

  it("waitForIdle() resolves only after the listeners are done with the run", async () => {
    const agent = new Agent({ model: scriptedModel(["answer"]) });
    const log: string[] = [];
    const work = gate();
    agent.subscribe((event) => (event.type === "agent_end" ? work.promise.then(() => log.push("listener done")) : undefined));
    const events = agent.prompt("hello");
    events.subscribe((event) => {
      if (event.type === "agent_end") work.open();
    });
    await agent.waitForIdle();
    log.push("idle");
    expect(log).toStrictEqual(["listener done", "idle"]);
  });

  it("gives each listener the run's events in order, the next once its Promise settled, and the run's abort signal", async () => {
    const agent = new Agent({ model: scriptedModel(["answer"]) });
    const slow: string[] = [];
    const quick: string[] = [];
    const signals = new Set<AbortSignal>();
    const work = gate();
    agent.subscribe(async (event, signal) => {
      signals.add(signal);
      slow.push(`start ${event.type}`);
      if (event.type === "agent_start") await work.promise;
      slow.push(`end ${event.type}`);
    });
    agent.subscribe((event) => {
      quick.push(event.type);
      if (event.type === "agent_end") work.open();
    });
    const messages = await agent.run("hello");
    const updates = ["message_update", "message_update", "message_update"];
    const types = ["agent_start", "turn_start", "message_start", "message_end", "message_start", ...updates, "message_end", "turn_end", "agent_end"];
    expect(quick).toStrictEqual(types);
    expect(slow).toStrictEqual(types.flatMap((type) => [`start ${type}`, `end ${type}`]));
    expect(messages).toHaveLength(2);
    expect(signals.size).toBe(1);
    expect([...signals][0]?.aborted).toBe(false);
  });

  it("signal is the active run's, and abort() reaches a listener still working after agent_end", async () => {
    const agent = new Agent({ model: scriptedModel(["answer"], { scheduler: asyncScheduler, delay: 1 }) });
    expect(agent.signal).toBeUndefined();
    let heard: AbortSignal | undefined;
    const aborted = gate();
    agent.subscribe((event, signal) => {
      if (event.type !== "agent_end") return undefined;
      heard = signal;
      return new Promise<void>((resolve) => signal.addEventListener("abort", () => (aborted.open(), resolve())));
    });
    const events = agent.prompt("hello");
    const runSignal = agent.signal;
    expect(runSignal?.aborted).toBe(false);
    await new Promise<void>((resolve) => events.subscribe({ complete: resolve }));
    expect(heard).toBe(runSignal);
    expect(agent.signal).toBe(runSignal);
    agent.abort();
    await aborted.promise;
    await agent.waitForIdle();
    expect(runSignal?.aborted).toBe(true);
    expect(agent.signal).toBeUndefined();
  });

  it("the function subscribe returns detaches the listener, also from events waiting for it", async () => {
    const agent = new Agent({ model: scriptedModel(["one", "two"]) });
    const heard: AgentEvent["type"][] = [];
    const work = gate();
    const unsubscribe = agent.subscribe(async (event) => {
      heard.push(event.type);
      await work.promise;
    });
    const run = agent.run("hello");
    unsubscribe();
    work.open();
    await run;
    await agent.run("again");
    expect(heard).toStrictEqual(["agent_start"]);
  });

  it("a listener that throws or rejects is told to onWarning; the run and the other listeners go on", async () => {
    const warnings: string[] = [];
    const agent = new Agent({ model: scriptedModel(["answer"]), onWarning: (message) => warnings.push(message) });
    const heard: string[] = [];
    agent.subscribe((event) => {
      if (event.type === "agent_start") throw new Error("sync boom");
    });
    agent.subscribe(async (event) => {
      if (event.type === "turn_end") throw new Error("async boom");
      heard.push(event.type);
    });
    const messages = await agent.run("hello");
    expect(messages).toHaveLength(2);
    expect(heard.at(-1)).toBe("agent_end");
    expect(warnings).toStrictEqual(["A subscribe() listener failed on agent_start: sync boom", "A subscribe() listener failed on turn_end: async boom"]);
  });

  // An onWarning that threw broke off the delivery of the event to the listeners after the failed
  // one; one that rejected was an unhandled rejection, which ends the process.
  it.each(["throws", "rejects"] as const)("an onWarning that %s does not stop the run or the other listeners", async (failure) => {
    let warned = 0;
    const agent = new Agent({
      model: scriptedModel(["answer"]),
      onWarning: () => {
        warned++;
        if (failure === "throws") throw new Error("the log is gone");
        return Promise.reject(new Error("the log is gone")) as never;
      },
    });
    const heard: string[] = [];
    agent.subscribe((event) => {
      if (event.type === "agent_start") throw new Error("sync boom");
    });
    agent.subscribe((event) => void heard.push(event.type));
    const messages = await agent.run("hello");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(messages).toHaveLength(2);
    expect(warned).toBe(1);
    expect(heard[0]).toBe("agent_start");
    expect(heard.at(-1)).toBe("agent_end");
  });
});
