import type { Observable, SchedulerLike } from "rxjs";
import type {
  AgentContext,
  AgentLoopConfig,
  AgentTool,
  AgentToolResult,
  AssistantMessage,
  ToolCall,
  ToolResultMessage,
} from "../types.js";

/** What every step of one assistant message's tool batch needs to know. */
export interface ToolBatch {
  readonly assistantMessage: AssistantMessage;
  readonly context: AgentContext;
  readonly config: AgentLoopConfig;
  readonly scheduler: SchedulerLike;
  /** The run's signal, handed to hooks. */
  readonly signal: AbortSignal;
  /**
   * Emits (and replays) why the batch stops early: an abort, or steering that interrupts tools.
   * Calls running then are aborted; calls not started yet are skipped.
   */
  readonly interruption: Observable<string>;
}

/** A call that passed preparation and may run. */
export class PreparedToolCall {
  constructor(
    readonly index: number,
    readonly toolCall: ToolCall,
    readonly tool: AgentTool,
    readonly args: unknown,
  ) {}
}

/** A call with its final result; `interrupted` marks abort and steering skips. */
export class FinalizedToolCall {
  constructor(
    readonly index: number,
    readonly toolCall: ToolCall,
    readonly result: AgentToolResult,
    readonly isError: boolean,
    readonly interrupted = false,
  ) {}
}

/** The last value of a batch: its result messages in call order, and whether to stop. */
export class ToolBatchSummary {
  constructor(
    readonly results: ToolResultMessage[],
    readonly terminate: boolean,
  ) {}
}

export const ABORTED_TOOL_TEXT = "Tool execution was aborted.";
export const STEERING_SKIP_TEXT = "Skipped due to queued user message.";
