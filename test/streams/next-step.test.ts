import { describe, expect, it } from "vitest";
import { MessageQueue } from "../../src/streams/message-queue.js";
import { hasToolCall, stepCountIs } from "../../src/streams/stop-conditions.js";
import { endBeforeHook, type HookAnswer, nextStep, type NextStep, type TurnOutcome } from "../../src/streams/next-step.js";
import type { RunState } from "../../src/streams/run-state.js";
import type { AgentLoopConfig, DrainableQueue } from "../../src/types.js";
import { assistantMessage, text, toolCall, toolResultMessage, userMessage } from "../testing/fixtures.js";
import { throwingGetter } from "../helpers/unreadable-values.js";

const steer = userMessage("steer");
const follow = userMessage("follow");
const answered = assistantMessage([text("Hi")]);
const failed = assistantMessage([], { stopReason: "error", errorMessage: "overloaded" });
const abortedMessage = assistantMessage([], { stopReason: "aborted" });
const result = toolResultMessage(toolCall("t1", "echo"), "ok");

interface Case {
  name: string;
  outcome?: Partial<TurnOutcome>;
  run?: { aborted?: boolean; turns?: number; config?: Partial<AgentLoopConfig>; steering?: DrainableQueue; followUp?: DrainableQueue };
  hook?: HookAnswer;
  expected: NextStep;
}

function queueOf(...messages: ReturnType<typeof userMessage>[]): MessageQueue {
  const queue = new MessageQueue();
  for (const message of messages) queue.push(message);
  return queue;
}

const throwing: DrainableQueue = {
  drain: () => {
    throw new Error("store down");
  },
  peek: () => [],
  arrivals: queueOf().arrivals,
};

function runOf(run: Case["run"] = {}): RunState {
  return {
    config: run.config ?? {},
    cancellation: { aborted: run.aborted ?? false },
    turns: run.turns ?? 1,
    steering: run.steering ?? queueOf(),
    followUp: run.followUp ?? queueOf(),
  } as unknown as RunState;
}

const cases: Case[] = [
  { name: "a failure of the turn's own machinery ends it as failed, first of all", outcome: { failure: "The steering queue failed: x" }, run: { aborted: true }, expected: { type: "end", reason: "failed", errorMessage: "The steering queue failed: x" } },
  { name: "an abort comes before a failed message", outcome: { message: failed }, run: { aborted: true }, expected: { type: "end", reason: "aborted" } },
  { name: "a failed model call", outcome: { message: failed }, run: { steering: queueOf(steer) }, expected: { type: "end", reason: "failed" } },
  { name: "a model that stopped with aborted", outcome: { message: abortedMessage }, expected: { type: "end", reason: "aborted" } },
  { name: "maxTurns reached, even with tool results", outcome: { toolResults: [result] }, run: { turns: 2, config: { maxTurns: 2 } }, expected: { type: "end", reason: "max_turns" } },
  { name: "a stopWhen condition holds, even with tool results", outcome: { toolResults: [result] }, run: { turns: 2, config: { stopWhen: stepCountIs(2) } }, expected: { type: "end", reason: "stop_condition", stopCondition: "stepCountIs(2)" } },
  { name: "the first condition that holds is the one named", outcome: { message: assistantMessage([toolCall("t1", "answer")]), toolResults: [result] }, run: { turns: 3, config: { stopWhen: [stepCountIs(9), hasToolCall("answer"), stepCountIs(3)] } }, expected: { type: "end", reason: "stop_condition", stopCondition: "hasToolCall(answer)" } },
  { name: "no condition holds: steering goes on", run: { steering: queueOf(steer), config: { stopWhen: [stepCountIs(9), hasToolCall("answer")] } }, expected: { type: "next_turn", pending: [steer] } },
  { name: "maxTurns comes before stopWhen", run: { turns: 2, config: { maxTurns: 2, stopWhen: stepCountIs(1) } }, expected: { type: "end", reason: "max_turns" } },
  { name: "a condition that throws ends the run as failed", run: { config: { stopWhen: [() => { throw new Error("no budget"); }] } }, expected: { type: "end", reason: "failed", errorMessage: "The stop condition stopWhen[0] failed: no budget" } },
  { name: "the hook says stop", outcome: { toolResults: [result] }, hook: true, expected: { type: "end", reason: "stopped_by_hook" } },
  { name: "the hook fails", hook: { error: new Error("no") }, expected: { type: "end", reason: "failed", errorMessage: "shouldStopAfterTurn failed: no" } },
  { name: "the hook says go on, with tool results", outcome: { toolResults: [result] }, hook: false, expected: { type: "next_turn", pending: [] } },
  { name: "steering comes before follow-ups", run: { steering: queueOf(steer), followUp: queueOf(follow) }, expected: { type: "next_turn", pending: [steer] } },
  { name: "steering also after terminating results", outcome: { toolResults: [result], terminated: true }, run: { steering: queueOf(steer) }, expected: { type: "next_turn", pending: [steer] } },
  { name: "follow-ups once nothing else is left", run: { followUp: queueOf(follow) }, expected: { type: "next_turn", pending: [follow] } },
  { name: "terminating results with nothing queued", outcome: { toolResults: [result], terminated: true }, expected: { type: "end", reason: "terminated" } },
  { name: "an answer without tool calls and nothing queued", expected: { type: "end", reason: "idle" } },
  { name: "a steering queue whose drain throws", run: { steering: throwing }, expected: { type: "end", reason: "failed", errorMessage: "The steering queue failed: store down" } },
  { name: "a follow-up queue whose drain throws", run: { followUp: throwing }, expected: { type: "end", reason: "failed", errorMessage: "The follow-up queue failed: store down" } },
  // Each went into the transcript as it was (and from there to the stores and every client); the
  // one whose role getter throws failed the run with the getter's bare text.
  { name: "a follow-up queue that hands out a number", run: { followUp: queueOf(42 as never) }, expected: { type: "end", reason: "failed", errorMessage: "The follow-up queue gave a message that is 42; what it gave was not added." } },
  {
    name: "a steering queue that hands out a message without a role",
    run: { steering: queueOf({ content: "hi", timestamp: 0 } as never) },
    expected: { type: "end", reason: "failed", errorMessage: "The steering queue gave a message that has no role (role: undefined); what it gave was not added." },
  },
  {
    name: "a follow-up queue that hands out a message whose role cannot be read",
    run: { followUp: queueOf(throwingGetter("role", "role gone") as never) },
    expected: { type: "end", reason: "failed", errorMessage: "The follow-up queue gave a message that could not be read (role gone); what it gave was not added." },
  },
];

describe("nextStep", () => {
  for (const { name, outcome, run, hook, expected } of cases) {
    it(name, () => {
      const turn: TurnOutcome = { message: answered, toolResults: [], terminated: false, ...outcome };
      expect(nextStep(runOf(run), turn, hook)).toStrictEqual(expected);
    });
  }

  it("drains only the queue it takes from, and in its mode", () => {
    const steering = queueOf(steer, userMessage("second"));
    const followUp = queueOf(follow);
    const run = runOf({ steering, followUp, config: { steeringMode: "all" } });
    expect(nextStep(run, { message: answered, toolResults: [], terminated: false })).toStrictEqual({ type: "next_turn", pending: [steer, userMessage("second")] });
    expect([steering.size, followUp.size]).toStrictEqual([0, 1]);
  });
});

describe("endBeforeHook (whether shouldStopAfterTurn is asked)", () => {
  it("ends before the hook only on a failure, an abort, maxTurns or a stopWhen condition", () => {
    const turn: TurnOutcome = { message: answered, toolResults: [result], terminated: false };
    expect(endBeforeHook(runOf(), turn)).toBeUndefined();
    expect(endBeforeHook(runOf({ steering: queueOf(steer) }), { ...turn, terminated: true })).toBeUndefined();
    expect(endBeforeHook(runOf({ turns: 3, config: { maxTurns: 3 } }), turn)).toStrictEqual({ type: "end", reason: "max_turns" });
    expect(endBeforeHook(runOf({ config: { signal: AbortSignal.abort() } }), turn)).toStrictEqual({ type: "end", reason: "aborted" });
    expect(endBeforeHook(runOf({ config: { stopWhen: stepCountIs(1) } }), turn)).toStrictEqual({ type: "end", reason: "stop_condition", stopCondition: "stepCountIs(1)" });
  });
});
