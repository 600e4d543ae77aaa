import type { Observable, SchedulerLike } from "rxjs";
import type { ArgumentsOf, ToolParameters } from "../tools/tool-schema.js";
import type { ImageContent, TextContent, Usage } from "./messages.js";
import type { ModelTool } from "./model.js";

/** What a tool returns: content for the model, details for the app, and an optional stop hint. */
export interface AgentToolResult<TDetails = unknown> {
  content: (TextContent | ImageContent)[];
  details: TDetails;
  /**
   * Ask the loop to stop after this batch. The loop stops only when every result of the batch
   * says so.
   */
  terminate?: boolean;
  /**
   * Tokens and cost the tool itself spent (e.g. a sub-agent's model calls). Kept on the
   * `toolResult` message and added to the Agent's usage totals; not the main model's context.
   */
  usage?: Usage;
}

/**
 * What a `needsApproval` function returns: whether this call waits for a person's
 * `ApprovalDecision`, as a value, a Promise or an Observable (its first value).
 */
export type NeedsApprovalResult = boolean | PromiseLike<boolean> | Observable<boolean>;

/** @deprecated use `NeedsApprovalResult` (renamed so it is not mistaken for a person's `ApprovalDecision`). */
export type ToolApprovalAnswer = NeedsApprovalResult;

/** What a `needsApproval` function gets besides the arguments. */
export interface ToolApprovalContext {
  toolCallId: string;
  signal: AbortSignal;
}

interface ApprovalCheck<TArguments> {
  check(args: TArguments, context: ToolApprovalContext): NeedsApprovalResult;
}

/** What `execute` gets besides the arguments. */
export interface ToolExecutionContext<TDetails = unknown> {
  /**
   * Fires on abort, timeout, unsubscribe, or when steering interrupts tools.
   *
   * Contract: it fires whenever this call is stopped, and never because another call still
   * running was stopped alone (its own timeout or cancel). Calls that can only be stopped
   * together (same tool, started together with one deadline, no `cancellations` source) share
   * one signal, so after this call has finished its signal may still fire as they are stopped,
   * as the reference's one signal per run does.
   */
  signal: AbortSignal;
  /**
   * Reports progress; each call becomes a `tool_execution_update` event. A report that is not a
   * tool result (`{ content: [...], details }`), nests deeper than `maxJsonDepth` or cannot be
   * read goes out as an error result saying so.
   */
  update(partialResult: AgentToolResult<TDetails>): void;
  /**
   * The run's approval decisions (`AgentLoopConfig.approvals`, an `Agent`'s `approve` / `deny`),
   * for a tool that runs a loop of its own (`agentTool`): that loop's calls waiting for approval
   * are answered by the same decisions. Absent when the run has no approvals source.
   */
  // `ApprovalDecision`'s shape, spelled out: loop-config.ts imports this file.
  readonly approvals?: Observable<{ toolCallId: string; approved: boolean; reason?: string }>;
  /**
   * The run's scheduler (`AgentLoopConfig.scheduler`), for a tool whose own timers or nested
   * loop (`agentTool`) must keep the run's time, virtual time in a marble test included.
   * Absent only where a caller builds a context by hand.
   */
  readonly scheduler?: SchedulerLike;
}

/**
 * What `execute` may return: a result, a Promise of one, or an Observable whose last value is
 * the result. An Observable's value is progress only if more follows: it is reported as an update
 * when the next value (or an error) arrives or the scheduler next gets a turn, and not at all if
 * the Observable completes first (so `of(result)` reports no progress).
 */
export type ToolExecuteResult<TDetails = unknown> =
  | AgentToolResult<TDetails>
  | PromiseLike<AgentToolResult<TDetails>>
  | Observable<AgentToolResult<TDetails>>;

/** `"sequential"`: a batch holding this tool runs one call at a time. */
export type ToolExecutionMode = "sequential" | "parallel";

/** A tool the agent can call. Build one with `defineTool` to get typed arguments. */
export interface AgentTool<TParameters extends ToolParameters = ToolParameters, TDetails = unknown> extends ModelTool {
  /** Name for people (a UI's tool card). */
  label: string;
  /**
   * The arguments' schema: TypeBox 0.34, any JSON Schema object (draft 2020-12 or draft-07,
   * TypeBox 1.x), or a Standard Schema validator (zod 4, valibot, arktype); see `ToolParameters`.
   *
   * Contract: a schema that cannot be used fails each call with an error result naming the tool
   * (`defineTool` throws instead).
   */
  parameters: TParameters;
  /**
   * Reshapes raw arguments before validation, for models that send an older or looser shape.
   *
   * Contract: returns the arguments to validate, synchronously; a throw, or a Promise, becomes an
   * error result.
   */
  prepareArguments?(rawArguments: unknown): unknown;
  /**
   * Runs the tool with validated arguments.
   *
   * Contract: throw (or reject, or error) on failure rather than encoding errors in content;
   * honour `signal`.
   */
  // A method, not a property, so that a tool with a specific schema is still an `AgentTool`
  // (method parameters are bivariant) and `tools: AgentTool[]` needs no `any`.
  execute(toolCallId: string, args: ArgumentsOf<TParameters>, context: ToolExecutionContext<TDetails>): ToolExecuteResult<TDetails>;
  executionMode?: ToolExecutionMode;
  /** How many calls of this tool may run at once, within the loop's `maxConcurrency`. */
  concurrency?: number;
  /** Calls running longer are aborted and get an error result saying they timed out. */
  timeoutMs?: number;
  /**
   * Starts each call as soon as the model has finished its arguments (`toolcall_end`), while the
   * rest of the message still streams; `false` keeps this tool waiting for the whole message even
   * with `eagerTools` (see `AgentLoopConfig.eagerTools`).
   *
   * Contract: only a call whose earlier calls in the message all started early starts early;
   * never in a sequential batch, nor for a tool with `executionMode: "sequential"` or
   * `needsApproval`. Its `tool_execution_*` events still come after the message's `message_end`;
   * if the message then fails, is aborted or is cut by the token limit, its signal fires and it
   * gets the result it would have got without `eager`.
   * @example eager: true // a slow search worth starting while the model writes its next call
   */
  eager?: boolean;
  /**
   * A call waits for a person's decision before it runs (`Agent.approve` / `deny`, or the loop's
   * `approvals`); the other calls of the batch go on meanwhile.
   *
   * Contract: `true`, or a function of the validated arguments that answers (a value, a Promise
   * or an Observable); a function that throws or fails denies the call with an error result
   * saying so. A denial is the call's error result `Tool call was denied[: reason]`.
   * @example needsApproval: (args) => args.path.startsWith("/etc")
   */
  // Declared as a method's type, bivariant in its parameters like `execute`, so a tool with a
  // specific schema is still an `AgentTool`.
  needsApproval?: boolean | ApprovalCheck<ArgumentsOf<TParameters>>["check"];
}
