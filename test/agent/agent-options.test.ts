import { asyncScheduler } from "rxjs";
import { describe, expect, it } from "vitest";
import { newActiveRun } from "../../src/agent/active-run.js";
import { runConfig, runContext, schedulerOf } from "../../src/agent/agent-options.js";
import type { AgentQueues } from "../../src/agent/agent-queues.js";
import { scriptedModel } from "../../src/testing/index.js";
import type { DrainableQueue } from "../../src/types.js";
import { FRESH_PROCESS_TIMEOUT_MS, sourceUrl } from "../helpers/fresh-process.js";
import { runWithHiddenClassProbe } from "../helpers/hidden-classes.js";
import { userMessage } from "../testing/fixtures.js";

describe("runConfig", () => {
  it(
    "gives every run's config one hidden class, also once optimized (the loop reads it at every step)",
    () => {
      const result = runWithHiddenClassProbe(
        `const { runConfig } = await import(${sourceUrl("agent/agent-options.ts")});
const { newActiveRun } = await import(${sourceUrl("agent/active-run.ts")});
const options = { model: { id: "m", provider: "p", api: "a", stream: () => undefined }, systemPrompt: "s", tools: [], messages: [], maxTurns: 3 };
const configs: object[] = [];
const configureSome = () => { for (let index = 0; index < 40; index++) configs.push(runConfig(options, newActiveRun("full"), { steeringMode: "all", followUpMode: "all" }, () => undefined, () => undefined)); };
optimizeNow(runConfig, configureSome);
console.log(sameHiddenClass(configs[configs.length - 1]!, configs[configs.length - 2]!));
`,
      );
      expect(result).toStrictEqual({ status: 0, stderr: "", stdout: "true\n" });
    },
    FRESH_PROCESS_TIMEOUT_MS,
  );

  it("gives the loop the agent's options less its own fields, its queue modes now, and the run's signal and Subjects; draining makes no queue", () => {
    const model = scriptedModel([]);
    const run = newActiveRun<unknown>("full");
    let made = 0;
    const config = runConfig(
      { model, maxTurns: 3, messages: [userMessage("hi")], systemPrompt: "be brief", tools: [], onWarning: () => undefined, runReplay: "compact" },
      run,
      { steeringMode: "all", followUpMode: "one-at-a-time" },
      () => undefined,
      () => {
        made++;
        return undefined as unknown as AgentQueues;
      },
    );
    const { steering, followUp, ...rest } = config;
    expect(rest).toStrictEqual({
      model,
      maxTurns: 3,
      steeringMode: "all",
      followUpMode: "one-at-a-time",
      signal: run.controller.signal,
      cancellations: run.cancellations,
      approvals: run.approvals,
    });
    const [steeringQueue, followUpQueue] = [steering, followUp] as DrainableQueue[];
    expect([steeringQueue!.drain("all"), followUpQueue!.drain("all"), steeringQueue!.peek(), made]).toStrictEqual([[], [], [], 0]);
  });
});

describe("runContext", () => {
  it("is the agent's transcript itself, with its system prompt and tools when set", () => {
    const messages = [userMessage("hi")];
    const context = runContext({ model: scriptedModel([]), systemPrompt: "be brief" }, messages);
    expect(context).toStrictEqual({ messages, systemPrompt: "be brief" });
    expect(context.messages).toBe(messages);
  });
});

describe("schedulerOf", () => {
  it("is the options' scheduler, else asyncScheduler", () => {
    expect(schedulerOf({ model: scriptedModel([]) })).toBe(asyncScheduler);
  });
});
