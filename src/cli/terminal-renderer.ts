import { roleOf } from "../types/messages.js";
import { runUsage } from "../model/run-usage.js";
import type { AgentEvent, AgentMessage, AgentState, AssistantMessage, Usage } from "../types.js";
import { subAgentUpdateOf } from "../types/sub-agent.js";
import { spinnerFrames, type Styled } from "./ansi.js";
import { subAgentActivity, subAgentLines } from "./sub-agent-lines.js";

/** A running tool as the status line shows it. */
export interface RunningTool {
  name: string;
  /** The latest progress text, if the tool reported any. */
  progress?: string;
}

/** What the renderer remembers between events. Never mutated: each event gives a new state. */
export interface RenderState {
  /** Whether the output so far ends with a newline. */
  atLineStart: boolean;
  /** What the agent is doing, for the status line. */
  phase: "idle" | "waiting" | "thinking" | "writing" | "tools";
  /** User messages seen in this run: the first is the prompt, the later ones were injected. */
  userMessages: number;
  runningTools: ReadonlyMap<string, RunningTool>;
}

export interface RenderOptions {
  /** Print the run's prompt (off in a terminal, where the typed line already shows it). */
  echoPrompt: boolean;
}

export const initialRenderState: RenderState = { atLineStart: true, phase: "idle", userMessages: 0, runningTools: new Map() };

/**
 * Turns one agent event into terminal output: streamed text as it arrives, thinking dimmed,
 * tool calls with their arguments and a shortened result, injected messages, usage per run.
 *
 * Pure: the same state and event always give the same output.
 * @example renderEvent(state, { type: "tool_execution_start", toolCallId: "1", toolName: "clock", args: {} }, options).output
 * // [{ text: "⚙ clock", style: "tool" }, { text: "\n", style: "plain" }]
 */
export function renderEvent(state: RenderState, event: AgentEvent, options: RenderOptions): { state: RenderState; output: Styled[] } {
  const output: Styled[] = [];
  let next: RenderState = state;
  const write = (text: string, style: Styled["style"] = "plain") => {
    if (text === "") return;
    output.push({ text, style });
    next = { ...next, atLineStart: text.endsWith("\n") };
  };
  const newLine = () => {
    if (!next.atLineStart) write("\n");
  };
  const line = (text: string, style: Styled["style"]) => {
    newLine();
    write(text, style);
    write("\n");
  };

  switch (event.type) {
    case "agent_start":
      next = { ...next, phase: "waiting", userMessages: 0, runningTools: new Map() };
      break;
    case "message_start": {
      const role = roleOf(event.message);
      if (role === "assistant") next = { ...next, phase: "waiting" };
      if (role !== "user") break;
      next = { ...next, userMessages: next.userMessages + 1 };
      const text = messageText(event.message);
      if (next.userMessages > 1) line(`↳ you: ${text}`, "user");
      else if (options.echoPrompt) line(`› ${text}`, "user");
      break;
    }
    case "message_update": {
      const modelEvent = event.assistantMessageEvent;
      if (modelEvent.type === "thinking_start") {
        newLine();
        write("thinking: ", "dim");
        next = { ...next, phase: "thinking" };
      } else if (modelEvent.type === "thinking_delta") write(modelEvent.delta, "dim");
      else if (modelEvent.type === "thinking_end") newLine();
      else if (modelEvent.type === "text_start") {
        newLine();
        next = { ...next, phase: "writing" };
      } else if (modelEvent.type === "text_delta") write(modelEvent.delta);
      else if (modelEvent.type === "text_end") newLine();
      break;
    }
    case "message_end": {
      if (roleOf(event.message) !== "assistant") break;
      const message = event.message as AssistantMessage;
      newLine();
      if (message.stopReason === "aborted") line("⏹ aborted", "warning");
      else if (message.stopReason === "error") line(`✗ model error: ${message.errorMessage ?? "unknown error"}`, "error");
      else if (message.stopReason === "length") line("… cut off: the reply reached the model's token limit", "warning");
      break;
    }
    case "tool_execution_start": {
      const argumentsText = formatArguments(event.args);
      line(`⚙ ${event.toolName}${argumentsText ? ` ${argumentsText}` : ""}`, "tool");
      const runningTools = new Map(next.runningTools).set(event.toolCallId, { name: event.toolName });
      next = { ...next, phase: "tools", runningTools };
      break;
    }
    case "tool_execution_update": {
      const nested = subAgentUpdateOf(event);
      if (nested) {
        for (const nestedLine of subAgentLines(nested, formatArguments, summarizeResult)) line(nestedLine.text, nestedLine.style);
        const activity = subAgentActivity(nested);
        if (activity !== undefined) next = { ...next, runningTools: new Map(next.runningTools).set(event.toolCallId, { name: event.toolName, progress: activity }) };
        break;
      }
      const progress = resultText(event.partialResult);
      const runningTools = new Map(next.runningTools).set(event.toolCallId, progress ? { name: event.toolName, progress } : { name: event.toolName });
      next = { ...next, runningTools };
      break;
    }
    case "tool_execution_end": {
      const runningTools = new Map(next.runningTools);
      runningTools.delete(event.toolCallId);
      next = { ...next, runningTools, phase: runningTools.size > 0 ? "tools" : "waiting" };
      const summary = summarizeResult(event.toolName, event.result);
      line(event.isError ? `  ✗ ${event.toolName}: ${summary}` : `  ✓ ${summary}`, event.isError ? "error" : "success");
      break;
    }
    case "agent_end":
      next = { ...next, phase: "idle", runningTools: new Map() };
      line(formatUsage(event.messages, event.usage), "dim");
      break;
    default:
      break;
  }
  return { state: next, output };
}

/**
 * The status line under the output while a run is active: a spinner, what is happening, and
 * what is queued. Undefined when idle.
 */
export function statusLine(state: RenderState, frame: number, agent: Pick<AgentState, "queuedSteering" | "queuedFollowUp">): string | undefined {
  if (state.phase === "idle") return undefined;
  const spinner = spinnerFrames[frame % spinnerFrames.length] ?? "*";
  const activity =
    state.phase === "tools"
      ? [...state.runningTools.values()].map((tool) => (tool.progress ? `${tool.name}: ${shorten(tool.progress, 40)}` : tool.name)).join(" · ") || "tools"
      : state.phase === "thinking"
        ? "thinking…"
        : state.phase === "writing"
          ? "writing…"
          : "waiting for the model…";
  const queued = [
    agent.queuedSteering > 0 ? `${agent.queuedSteering} steering queued` : "",
    agent.queuedFollowUp > 0 ? `${agent.queuedFollowUp} follow-up queued` : "",
  ].filter(Boolean);
  return `${spinner} ${activity}${queued.length > 0 ? ` · ${queued.join(" · ")}` : ""}  (type to steer · /later to queue · Ctrl-C aborts)`;
}

/** Tool arguments on one line, `key=value`, shortened. */
export function formatArguments(args: unknown): string {
  if (typeof args !== "object" || args === null) return args === undefined ? "" : shorten(JSON.stringify(args) ?? "", 100);
  const pairs = Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return shorten(pairs.join(" "), 100);
}

/** A tool result in a few words, using its details when the tool is one we know. */
export function summarizeResult(toolName: string, result: unknown): string {
  const details = (result as { details?: unknown } | undefined)?.details as Record<string, unknown> | undefined;
  if (toolName === "list_files" && details && Array.isArray(details["entries"])) {
    return `${String(details["path"])}: ${details["entries"].length} entries`;
  }
  if (toolName === "read_file" && details && typeof details["bytes"] === "number") {
    return `${String(details["path"])} · ${String(details["lines"])} lines · ${details["bytes"]} bytes${details["truncated"] ? " (cut)" : ""}`;
  }
  return shorten(resultText(result) ?? "(no text)", 160);
}

/** A run's model calls and its usage (`agent_end.usage`: tools' own usage included), e.g. `2 model calls · 150 in / 40 out tokens`. */
export function formatUsage(messages: readonly AgentMessage[], usage: Usage = runUsage(messages)): string {
  const calls = messages.filter((message) => roleOf(message) === "assistant").length;
  const cached = usage.cacheRead > 0 ? ` (${usage.cacheRead} cached)` : "";
  const cost = usage.cost.total > 0 ? ` · $${usage.cost.total.toFixed(4)}` : "";
  return `· ${calls} model call${calls === 1 ? "" : "s"} · ${usage.input} in${cached} / ${usage.output} out tokens${cost}`;
}

function resultText(result: unknown): string | undefined {
  const content = (result as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return undefined;
  const text = content
    .map((part: unknown) => ((part as { type?: unknown }).type === "text" ? String((part as { text?: unknown }).text) : "[image]"))
    .join(" ")
    .trim();
  return text === "" ? undefined : text;
}

function messageText(message: AgentMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: unknown) => ((part as { type?: unknown }).type === "text" ? String((part as { text?: unknown }).text) : "[image]")).join("");
}



function shorten(text: string, length: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= length ? flat : `${flat.slice(0, length - 1)}…`;
}
