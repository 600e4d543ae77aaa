import { isFailedMessage, roleOf } from "../types/messages.js";
import type { AgentEvent, AgentMessage, AssistantMessage, ToolCall } from "../types.js";

export interface EventGrammarOptions {
  /** `false` for a run cut short by unsubscribing: then there must be no `agent_end`. Default `true`. */
  complete?: boolean;
}

/**
 * Lists every way a run's events break the protocol; an empty list means well formed.
 *
 * Checks: `agent_start` first and once; `agent_end` last and once (or absent for an
 * unsubscribed run); turns not nested and closed; messages inside turns, not nested, paired,
 * updates only inside an assistant message; tool executions paired per id and closed before
 * `turn_end`; each tool call answered by exactly one result in call order, and those results
 * are `turn_end.toolResults`; `agent_end.messages` equal to the ended messages, in order.
 */
export function checkEventGrammar(events: readonly AgentEvent[], options: EventGrammarOptions = {}): string[] {
  const complete = options.complete ?? true;
  const problems: string[] = [];
  const problem = (index: number, text: string) => problems.push(`#${index} ${events[index]?.type ?? "end"}: ${text}`);
  let inTurn = false;
  let openMessage: AgentMessage | undefined;
  let agentEnded = false;
  const runningTools = new Map<string, number>();
  const seenToolIds = new Set<string>();
  let expectedResults: ToolCall[] = [];
  let lastAssistant: AssistantMessage | undefined;
  let sawAssistant = false;
  /** The tool results of the open turn's assistant message, for `turn_end.toolResults`. */
  let turnResults: AgentMessage[] = [];
  const endedMessages: AgentMessage[] = [];

  if (events[0]?.type !== "agent_start") problem(0, "the first event must be agent_start");
  events.forEach((event, index) => {
    if (agentEnded) problem(index, "event after agent_end");
    switch (event.type) {
      case "agent_start":
        if (index !== 0) problem(index, "agent_start must come once, first");
        break;
      case "turn_start":
        if (inTurn) problem(index, "turn_start inside an open turn");
        inTurn = true;
        break;
      case "turn_end":
        if (!inTurn) problem(index, "turn_end without turn_start");
        if (openMessage) problem(index, "turn_end while a message is open");
        if (runningTools.size > 0) problem(index, `turn_end while tools run: ${[...runningTools.keys()].join(", ")}`);
        if (expectedResults.length > 0) problem(index, `tool calls without a result: ${expectedResults.map((call) => call.id).join(", ")}`);
        if (event.message !== lastAssistant && JSON.stringify(event.message) !== JSON.stringify(lastAssistant)) {
          problem(index, "turn_end.message is not the turn's assistant message");
        }
        if (!sameMessages(event.toolResults, turnResults)) {
          problem(index, "turn_end.toolResults differ from the turn's tool result messages");
        }
        inTurn = false;
        turnResults = [];
        lastAssistant = undefined;
        break;
      case "message_start":
        if (!inTurn) problem(index, "message outside a turn");
        if (openMessage) problem(index, "message_start while another message is open");
        openMessage = event.message;
        break;
      case "message_update":
        if (!openMessage || roleOf(openMessage) !== "assistant") problem(index, "message_update outside an assistant message");
        break;
      case "message_end": {
        if (!openMessage) problem(index, "message_end without message_start");
        else if (roleOf(openMessage) !== roleOf(event.message)) problem(index, "message_end role differs from message_start");
        openMessage = undefined;
        endedMessages.push(event.message);
        const role = roleOf(event.message);
        if (role === "assistant") {
          sawAssistant = true;
          lastAssistant = event.message as AssistantMessage;
          expectedResults = lastAssistant.content.filter((block): block is ToolCall => block.type === "toolCall");
          const failed = isFailedMessage(lastAssistant);
          if (failed) expectedResults = [];
        } else if (role === "toolResult") {
          const result = event.message as Extract<AgentMessage, { role: "toolResult" }>;
          const expected = expectedResults.shift();
          // Before the run's first assistant message, a result answers a call from the
          // transcript the run started from (e.g. a repaired crash).
          if (!expected && !sawAssistant) break;
          turnResults.push(result);
          if (!expected) problem(index, `unexpected tool result for ${result.toolCallId}`);
          else if (expected.id !== result.toolCallId) problem(index, `tool result for ${result.toolCallId}, expected ${expected.id} (source order)`);
        }
        break;
      }
      case "tool_execution_start":
        if (seenToolIds.has(event.toolCallId)) problem(index, `tool ${event.toolCallId} started twice`);
        seenToolIds.add(event.toolCallId);
        runningTools.set(event.toolCallId, index);
        break;
      case "tool_execution_update":
        if (!runningTools.has(event.toolCallId)) problem(index, `update for tool ${event.toolCallId} that is not running`);
        break;
      case "tool_execution_end":
        if (!runningTools.delete(event.toolCallId)) problem(index, `end for tool ${event.toolCallId} that is not running`);
        break;
      case "tool_approval_start":
      case "tool_approval_end":
      case "tool_slot_wait_start":
      case "tool_slot_wait_end":
        if (!runningTools.has(event.toolCallId)) problem(index, `${event.type} for tool ${event.toolCallId} that has not started or has ended`);
        break;
      case "agent_end":
        if (inTurn) problem(index, "agent_end inside an open turn");
        agentEnded = true;
        if (!sameMessages(event.messages, endedMessages)) problem(index, "agent_end.messages differ from the messages that ended");
        break;
    }
  });
  if (complete && !agentEnded) problem(events.length, "the run has no agent_end");
  if (!complete && agentEnded) problem(events.length, "an unsubscribed run must not emit agent_end");
  return problems;
}

/** Throws an error listing every problem `checkEventGrammar` finds. */
export function assertEventGrammar(events: readonly AgentEvent[], options: EventGrammarOptions = {}): void {
  const problems = checkEventGrammar(events, options);
  if (problems.length > 0) {
    throw new Error(`Malformed agent event sequence:\n${problems.join("\n")}\nTypes: ${events.map((event) => event.type).join(", ")}`);
  }
}



function sameMessages(left: readonly AgentMessage[], right: readonly AgentMessage[]): boolean {
  return left.length === right.length && left.every((message, index) => message === right[index] || JSON.stringify(message) === JSON.stringify(right[index]));
}
