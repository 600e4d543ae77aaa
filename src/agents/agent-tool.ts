import type { TObject, TString } from "@sinclair/typebox";
import { asyncScheduler, Observable } from "rxjs";
import { agentLoop } from "../streams/agent-loop.js";
import { defineTool } from "../tools/define-tool.js";
import type { ArgumentsOf, ToolParameters } from "../tools/tool-schema.js";
import { isAssistantMessage } from "../types/messages.js";
import type { SubAgentDetails, SubAgentResult, SubAgentUpdate } from "../types/sub-agent.js";
import type { AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult, OutputOf, OutputSchema, ToolExecutionContext } from "../types.js";
import { jsonText } from "../util/json-text.js";
import { withField } from "../util/with-field.js";

/** TypeBox 0.34's `Kind` (created with `Symbol.for`). */
const typeBoxKind = Symbol.for("TypeBox.Kind");

/**
 * The arguments an agent tool takes when it declares none: the task, in words. What
 * `Type.Object({ task: Type.String({ description }) })` builds, written out: importing TypeBox's
 * builder here would load its 250 modules into every `import("rxagent")`.
 */
export const subAgentTask = {
  [typeBoxKind]: "Object",
  type: "object",
  required: ["task"],
  properties: {
    task: { [typeBoxKind]: "String", description: "What to do, in full: the sub-agent sees nothing else of this conversation.", type: "string" },
  },
} as unknown as TObject<{ task: TString }>;

/** How deep agent tools may nest by default: an agent's sub-agent is depth 1, its own sub-agent depth 2. */
export const DEFAULT_MAX_AGENT_DEPTH = 4;

/** The run settings an agent tool takes from the loop's config; a run's signal, queues, cancels and approvals come from the call. */
type NestedLoopConfig = Omit<AgentLoopConfig, "output" | "signal" | "steering" | "followUp" | "cancellations" | "approvals">;

export interface AgentToolOptions<TParameters extends ToolParameters, TOutputSchema extends OutputSchema> extends NestedLoopConfig {
  /** The tool's name, as the parent model calls it. */
  name: string;
  /** Name for people; defaults to `name`. */
  label?: string;
  /** What the parent model reads to decide when to call it. */
  description: string;
  /** The arguments' schema. Default: `{ task: string }` (`subAgentTask`). */
  parameters?: TParameters;
  /**
   * The sub-agent's prompt, from the call's arguments. Default: the `task` argument, or the
   * arguments as JSON when there is none.
   * @example prompt: ({ topic }) => `Find what the files say about ${topic}.`
   */
  prompt?: (args: ArgumentsOf<TParameters>) => string | AgentMessage[];
  /** The sub-agent's system prompt. */
  systemPrompt?: string;
  /**
   * The sub-agent's tools. A function is read at each call, so an agent may list itself (its
   * depth is then bounded by `maxDepth`).
   * @example tools: () => [readFile, researcher]
   */
  tools?: readonly AgentTool[] | (() => readonly AgentTool[]);
  /** Messages every run of the sub-agent starts from (before its prompt); copied per call. */
  messages?: readonly AgentMessage[];
  /** A schema for the sub-agent's structured final answer: the call's result is then that value (see `AgentLoopConfig.output`). */
  output?: TOutputSchema;
  /**
   * How deep agent tools may nest, counting this one as depth 1 when a run calls it directly.
   * A call deeper than this runs nothing and gets an error result saying so. Default 4.
   */
  maxDepth?: number;
  /**
   * Which of the sub-agent's events reach the parent as `tool_execution_update`s. Default: all
   * but its `agent_end` (that is the call's result). Leave out `message_update` to keep a wire
   * light: each carries the whole partial message.
   * @example forwardEvent: (event) => event.type !== "message_update"
   */
  forwardEvent?: (event: AgentEvent) => boolean;
  /** The call's own time limit in the parent's run (see `AgentTool.timeoutMs`); `toolTimeoutMs` is the sub-agent's tools'. */
  timeoutMs?: number;
  /** How many calls of this tool may run at once in the parent's run. */
  concurrency?: number;
  /** Whether a person approves each call in the parent's run before the sub-agent starts. */
  needsApproval?: boolean;
}

/** The tool at each depth, for the agent tools that run inside another's loop. */
const atDepth = new WeakMap<AgentTool, (depth: number) => AgentTool>();

/**
 * A tool whose call runs an agent of its own: its own system prompt, tools and model, as a
 * nested `agentLoop`. The parent sees it work and pays for it:
 * - each event of the nested run reaches the parent's subscribers at once, as a
 *   `tool_execution_update` of the call whose `partialResult.details` is a `SubAgentUpdate`;
 * - the result is the nested run's final answer as text (with `output`: the validated value as
 *   JSON text, and in `details.output`), and its `usage` the nested run's total, so the parent's
 *   `agent_end.usage` and an `Agent`'s totals include it;
 * - a nested run that fails, or ends without a valid `output`, is the call's error result.
 *
 * Stopping the call (the parent's abort, `cancelToolCall`, its timeout) unsubscribes the nested
 * run at once, which aborts its model request and its tools. Calls waiting for approval in the
 * nested run wait on the parent's approvals: an `Agent` shows them in `pendingApprovals` and
 * `approve` / `deny` answer them. An agent tool calling agent tools counts depth, and a call past
 * `maxDepth` fails without running, so an agent that calls itself ends.
 *
 * @example
 * const researcher = agentTool({
 *   name: "researcher",
 *   description: "Reads the project's files and answers a question about them.",
 *   systemPrompt: "Answer from the files only.",
 *   tools: [readFile, listFiles],
 *   model,
 * });
 */
export function agentTool<TParameters extends ToolParameters = typeof subAgentTask, TOutputSchema extends OutputSchema = OutputSchema>(
  options: AgentToolOptions<TParameters, TOutputSchema>,
): AgentTool<TParameters, SubAgentDetails<OutputOf<TOutputSchema>>> {
  const byDepth = new Map<number, AgentTool<TParameters, SubAgentDetails<OutputOf<TOutputSchema>>>>();
  const toolAt = (depth: number): AgentTool<TParameters, SubAgentDetails<OutputOf<TOutputSchema>>> => {
    let tool = byDepth.get(depth);
    if (tool === undefined) {
      tool = defineTool<TParameters, SubAgentDetails<OutputOf<TOutputSchema>>>({
        name: options.name,
        label: options.label ?? options.name,
        description: options.description,
        parameters: options.parameters ?? (subAgentTask as unknown as TParameters),
        execute: (_toolCallId, args, context) => runSubAgent(options, depth, args, context),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        ...(options.needsApproval === undefined ? {} : { needsApproval: options.needsApproval }),
      });
      byDepth.set(depth, tool);
      atDepth.set(tool as AgentTool, toolAt as (depth: number) => AgentTool);
    }
    return tool;
  };
  return toolAt(1);
}

/** One call: the nested run, its events passed on as progress, its `agent_end` made the result. */
function runSubAgent<TParameters extends ToolParameters, TOutputSchema extends OutputSchema>(
  options: AgentToolOptions<TParameters, TOutputSchema>,
  depth: number,
  args: ArgumentsOf<TParameters>,
  context: ToolExecutionContext<SubAgentDetails<OutputOf<TOutputSchema>>>,
): Observable<AgentToolResult<SubAgentDetails<OutputOf<TOutputSchema>>>> {
  return new Observable((subscriber) => {
    const maxDepth = options.maxDepth ?? DEFAULT_MAX_AGENT_DEPTH;
    if (depth > maxDepth) {
      subscriber.error(new Error(`Sub-agent "${options.name}" was not started: it would run ${depth} agents deep, past maxDepth ${maxDepth} (an agent that keeps calling itself, or too long a chain of agents).`));
      return undefined;
    }
    const {
      name, label: _label, description: _description, parameters: _parameters, prompt, systemPrompt, tools, messages, maxDepth: _maxDepth,
      forwardEvent, timeoutMs: _timeoutMs, concurrency: _concurrency, needsApproval: _needsApproval, ...loopConfig
    } = options;
    // The parent run's time unless the options name a scheduler: a sub-agent's timestamps,
    // timeouts and retries then follow a marble test's virtual time as the parent's do.
    const scheduler = loopConfig.scheduler ?? context.scheduler ?? asyncScheduler;
    const nestedTools = (typeof tools === "function" ? tools() : (tools ?? [])).map((tool) => atDepth.get(tool)?.(depth + 1) ?? tool);
    const config: AgentLoopConfig = withField(loopConfig, "scheduler", scheduler);
    if (context.approvals !== undefined) config.approvals = context.approvals;
    const run$ = agentLoop(promptOf(prompt, args, scheduler.now()), { ...(systemPrompt === undefined ? {} : { systemPrompt }), messages: [...(messages ?? [])], tools: nestedTools }, config);
    let end: Extract<AgentEvent, { type: "agent_end" }> | undefined;
    return run$.subscribe({
      next: (event) => {
        if (event.type === "agent_end") end = event;
        else if (forwardEvent === undefined || forwardEvent(event)) {
          const details: SubAgentUpdate = { type: "sub_agent_event", agent: name, depth, event };
          context.update({ content: [], details });
        }
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => {
        if (end === undefined) subscriber.error(new Error(`Sub-agent "${name}" ended without agent_end.`));
        else if (options.output !== undefined && end.output === undefined) subscriber.error(new Error(`Sub-agent "${name}" gave no valid output: ${end.outputError ?? end.reason ?? "no reason given"}.`));
        else if (end.reason === "failed" || end.reason === "aborted") subscriber.error(new Error(`Sub-agent "${name}" ${end.reason}: ${failureOf(end)}`));
        else {
          subscriber.next(resultOf(name, end, options.output !== undefined));
          subscriber.complete();
        }
      },
    });
  });
}

function promptOf<TParameters extends ToolParameters>(prompt: ((args: ArgumentsOf<TParameters>) => string | AgentMessage[]) | undefined, args: ArgumentsOf<TParameters>, now: number): AgentMessage[] {
  const text = prompt ? prompt(args) : defaultPrompt(args);
  return typeof text === "string" ? [{ role: "user", content: text, timestamp: now }] : text;
}

function defaultPrompt(args: unknown): string {
  const task = (args as { task?: unknown } | undefined)?.task;
  return typeof task === "string" ? task : jsonText(args);
}

/** The nested run's final answer: its last assistant message's text, or its output as JSON. */
function resultOf<TOutput>(name: string, end: Extract<AgentEvent, { type: "agent_end" }>, hasOutput: boolean): AgentToolResult<SubAgentResult<TOutput>> {
  const details: SubAgentResult<TOutput> = { type: "sub_agent_result", agent: name, reason: end.reason };
  if (hasOutput) details.output = end.output as TOutput;
  const answer = hasOutput ? jsonText(end.output) : lastAnswerOf(end.messages);
  const text = answer === "" ? `Sub-agent "${name}" ended (${end.reason ?? "no reason given"}) without a text answer.` : answer;
  const result: AgentToolResult<SubAgentResult<TOutput>> = { content: [{ type: "text", text }], details };
  if (end.usage !== undefined) result.usage = end.usage;
  return result;
}

function lastAnswerOf(messages: readonly AgentMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (!isAssistantMessage(message)) continue;
    return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  }
  return "";
}

function failureOf(end: Extract<AgentEvent, { type: "agent_end" }>): string {
  if (end.errorMessage !== undefined) return end.errorMessage;
  for (let index = end.messages.length - 1; index >= 0; index--) {
    const message = end.messages[index]!;
    if (isAssistantMessage(message)) return message.errorMessage ?? message.stopReason;
  }
  return "no reason given";
}
