import { roleOf } from "../types/messages.js";
import { subAgentUpdateOf } from "../types/sub-agent.js";
import type { AssistantMessage, SubAgentUpdate } from "../types.js";
import type { Styled } from "./ansi.js";

/** A line the terminal prints for a sub-agent's event. */
export interface SubAgentLine {
  text: string;
  style: Styled["style"];
}

/**
 * What a sub-agent's event (`agentTool`) prints, folded: its tool calls and results and its
 * final reply, one line each, indented under the call that runs it by its depth (`│`); its
 * streamed text is not printed (the status line shows that it writes). A sub-agent of a
 * sub-agent is indented one level more.
 * @example subAgentLines({ type: "sub_agent_event", agent: "researcher", depth: 1, event: { type: "tool_execution_start", toolCallId: "1", toolName: "read_file", args: { path: "a.md" } } })
 * // [{ text: "  │ researcher ⚙ read_file path=\"a.md\"", style: "tool" }]
 */
export function subAgentLines(update: SubAgentUpdate, formatArguments: (args: unknown) => string, summarize: (toolName: string, result: unknown) => string): SubAgentLine[] {
  const { event, agent, depth } = update;
  const deeper = subAgentUpdateOf(event);
  if (deeper) return subAgentLines(deeper, formatArguments, summarize);
  const prefix = `${"  ".repeat(depth)}│ ${agent} `;
  switch (event.type) {
    case "tool_execution_start": {
      const argumentsText = formatArguments(event.args);
      return [{ text: `${prefix}⚙ ${event.toolName}${argumentsText ? ` ${argumentsText}` : ""}`, style: "tool" }];
    }
    case "tool_execution_end": {
      const summary = summarize(event.toolName, event.result);
      return [{ text: event.isError ? `${prefix}✗ ${event.toolName}: ${summary}` : `${prefix}✓ ${summary}`, style: event.isError ? "error" : "success" }];
    }
    case "message_end": {
      if (roleOf(event.message) !== "assistant") return [];
      const message = event.message as AssistantMessage;
      if (message.stopReason === "error" || message.stopReason === "aborted") return [{ text: `${prefix}✗ ${message.errorMessage ?? message.stopReason}`, style: "error" }];
      const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("").replace(/\s+/g, " ").trim();
      return text === "" ? [] : [{ text: `${prefix}› ${text.length <= 160 ? text : `${text.slice(0, 159)}…`}`, style: "dim" }];
    }
    default:
      return [];
  }
}

/** What a sub-agent does now, for the status line: e.g. `researcher: read_file`. */
export function subAgentActivity(update: SubAgentUpdate): string | undefined {
  const deeper = subAgentUpdateOf(update.event);
  if (deeper) return subAgentActivity(deeper);
  const { event, agent } = update;
  if (event.type === "tool_execution_start") return `${agent}: ${event.toolName}`;
  if (event.type === "message_update") return `${agent}: writing…`;
  if (event.type === "turn_start") return `${agent}: waiting for the model…`;
  return undefined;
}
