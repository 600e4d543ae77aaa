/**
 * The invariants every scenario run must hold. Each check returns the problems it finds, so a
 * failing property prints all of them next to the shrunk scenario.
 */
import { checkEventGrammar } from "../../src/testing/event-grammar.js";
import { toolCallsOf } from "../../src/types/messages.js";
import type { AgentEvent, AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/types.js";
import type { Scenario } from "./scenario.js";
import type { ScenarioRun } from "./run-scenario.js";

/** The messages that ended, in order: the run's view of the transcript. */
export function transcriptOf(events: readonly AgentEvent[]): AgentMessage[] {
  return events.flatMap((event) => (event.type === "message_end" ? [event.message] : []));
}

function roleOf(message: AgentMessage | undefined): unknown {
  return (message as { role?: unknown } | undefined)?.role;
}

/** Event grammar, and a run that is not unsubscribed ends with `agent_end` and no error. */
export function grammarProblems(run: ScenarioRun): string[] {
  const problems = checkEventGrammar(run.events, { complete: !run.unsubscribed });
  if (run.error !== undefined) problems.push(`the run errored: ${String(run.error)}`);
  if (!run.unsubscribed && !run.completed) problems.push("the run never completed");
  return problems;
}

/**
 * Every tool call of a finished assistant message is followed by exactly one result per call, in
 * source order, and `turn_end.toolResults` holds those results.
 */
export function toolResultProblems(events: readonly AgentEvent[], complete: boolean): string[] {
  const problems: string[] = [];
  const transcript = transcriptOf(events);
  transcript.forEach((message, index) => {
    if (roleOf(message) !== "assistant") return;
    const assistant = message as AssistantMessage;
    if (assistant.stopReason === "error" || assistant.stopReason === "aborted") return;
    const calls = toolCallsOf(assistant);
    const following = transcript.slice(index + 1, index + 1 + calls.length);
    if (!complete && following.length < calls.length) return;
    calls.forEach((call, callIndex) => {
      const result = following[callIndex] as ToolResultMessage | undefined;
      if (roleOf(result) !== "toolResult" || result?.toolCallId !== call.id) {
        problems.push(`tool call ${call.id} is not answered at position ${callIndex} after its message`);
      }
    });
  });
  const answered = transcript.filter((message) => roleOf(message) === "toolResult").map((message) => (message as ToolResultMessage).toolCallId);
  if (new Set(answered).size !== answered.length) problems.push(`a tool call has more than one result: ${answered.join(", ")}`);
  let turnResults: AgentMessage[] = [];
  for (const event of events) {
    if (event.type === "turn_start") turnResults = [];
    if (event.type === "message_end" && roleOf(event.message) === "toolResult") turnResults.push(event.message);
    if (event.type === "turn_end" && !sameList(event.toolResults, turnResults)) {
      problems.push("turn_end.toolResults differ from the turn's tool result messages");
    }
  }
  return problems;
}

/** The loop's and each tool's concurrency limits were never exceeded in the tool bodies. */
export function concurrencyProblems(scenario: Scenario, run: ScenarioRun): string[] {
  const problems: string[] = [];
  const limit = scenario.toolExecution === "sequential" ? 1 : (scenario.maxConcurrency ?? Infinity);
  if (run.maxRunning > limit) problems.push(`${run.maxRunning} tools ran at once, limit ${limit}`);
  const capped = run.maxRunningByTool.get("capped") ?? 0;
  if (capped > 2) problems.push(`${capped} "capped" tools ran at once, its concurrency is 2`);
  return problems;
}

/**
 * Each steering and follow-up message pushed during the run is in the transcript exactly once or
 * reported once in `agent_end.queued` (in its own queue), never both, never neither.
 */
export function queueProblems(run: ScenarioRun): string[] {
  if (run.unsubscribed) return [];
  const problems: string[] = [];
  const end = run.events[run.events.length - 1];
  if (end?.type !== "agent_end") return problems;
  const transcript = transcriptOf(run.events);
  const check = (pushed: AgentMessage[], queued: AgentMessage[], other: AgentMessage[], kind: string) => {
    for (const message of pushed) {
      const inTranscript = transcript.filter((candidate) => candidate === message).length;
      const inQueue = queued.filter((candidate) => candidate === message).length;
      if (inTranscript + inQueue !== 1) {
        problems.push(`${kind} "${String((message as { content: unknown }).content)}": ${inTranscript} in the transcript, ${inQueue} queued`);
      }
      if (other.includes(message)) problems.push(`${kind} reported in the wrong queue`);
    }
    for (const message of queued) {
      if (!pushed.includes(message)) problems.push(`${kind} queued but never pushed`);
    }
  };
  check(run.pushedSteering, end.queued?.steering ?? [], end.queued?.followUp ?? [], "steering");
  check(run.pushedFollowUps, end.queued?.followUp ?? [], end.queued?.steering ?? [], "follow-up");
  return problems;
}

/**
 * Once the run is over (ended, or unsubscribed), no tool body is left running unsignalled, and
 * no model call is left open unsignalled. After an abort, nothing new starts; after an
 * unsubscribe, nothing at all happens.
 */
export function teardownProblems(run: ScenarioRun): string[] {
  const problems: string[] = [];
  for (const tool of run.tools) {
    if (!tool.finished && !tool.signal.aborted) problems.push(`tool ${tool.toolCallId} was left without its signal firing`);
    if (tool.tornDown && !tool.signal.aborted) problems.push(`tool ${tool.toolCallId} was torn down without its signal firing`);
  }
  run.modelCalls.forEach((call, index) => {
    if (call.open && !call.signal.aborted) problems.push(`model call ${index} was left open without its signal firing`);
  });
  if (run.atAbort) {
    const { events: _events, ...before } = run.atAbort;
    const { events: _endEvents, ...after } = run.atEnd;
    if (JSON.stringify(before) !== JSON.stringify(after)) {
      problems.push(`work started after the abort: ${JSON.stringify(before)} then ${JSON.stringify(after)}`);
    }
  }
  if (run.atUnsubscribe && JSON.stringify(run.atUnsubscribe) !== JSON.stringify(run.atEnd)) {
    problems.push(`activity after the unsubscribe: ${JSON.stringify(run.atUnsubscribe)} then ${JSON.stringify(run.atEnd)}`);
  }
  return problems;
}

/** `agent_end.messages` is the transcript the run added, starting with the prompt. */
export function agentEndProblems(run: ScenarioRun): string[] {
  const end = run.events[run.events.length - 1];
  if (end?.type !== "agent_end") return [];
  const problems: string[] = [];
  if (!sameList(end.messages, transcriptOf(run.events))) problems.push("agent_end.messages is not the transcript's new tail");
  if (end.messages[0] !== run.prompt) problems.push("agent_end.messages does not start with the prompt");
  return problems;
}

export function allProblems(scenario: Scenario, run: ScenarioRun): string[] {
  return [
    ...grammarProblems(run),
    ...toolResultProblems(run.events, !run.unsubscribed),
    ...concurrencyProblems(scenario, run),
    ...queueProblems(run),
    ...teardownProblems(run),
    ...agentEndProblems(run),
  ];
}

function sameList(left: readonly unknown[], right: readonly unknown[]): boolean {
  return left.length === right.length && left.every((value, index) => value === right[index]);
}
