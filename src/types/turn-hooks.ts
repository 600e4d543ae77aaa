import type { Model } from "./model.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage, Usage } from "./messages.js";
import type { AgentContext } from "./agent-context.js";

// What the hooks at a turn's boundary see and answer (shouldStopAfterTurn, stopWhen,
// prepareFirstTurn, prepareNextTurn): AgentLoopConfig (loop-config.ts) declares the hooks.

export interface ShouldStopAfterTurnContext {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  /** The run's context as the run holds it: read it, do not change it (`prepareNextTurn` returns changes). */
  context: AgentContext;
  /** Messages this run has added so far. */
  newMessages: AgentMessage[];
}

/** What a `stopWhen` condition sees after a turn. */
export interface StopConditionContext {
  /** Turns this run has finished, the one just ended included. */
  readonly turns: number;
  /** The turn's assistant message. */
  readonly message: AssistantMessage;
  readonly toolResults: readonly ToolResultMessage[];
  /** Messages this run has added so far. */
  readonly newMessages: readonly AgentMessage[];
  /** The run's tokens and cost so far (`runUsage` over `newMessages`), summed when read. */
  readonly usage: Usage;
}

/**
 * One stop condition of `stopWhen`: `true` ends the run after the turn, with `agent_end.reason`
 * `"stop_condition"` and `agent_end.stopCondition` naming it (its `description`, else its
 * function name). `stepCountIs`, `hasToolCall` and `usageExceeds` make the common ones. It answers
 * synchronously: a throw, or a Promise, ends the run as `"failed"`, naming the condition.
 */
export interface StopCondition {
  (context: StopConditionContext): boolean;
  /** The name `agent_end.stopCondition` reports, e.g. `"stepCountIs(5)"`. */
  readonly description?: string;
}

/** What `prepareNextTurn` sees: the turn just ended, as `shouldStopAfterTurn` sees it. */
export type PrepareNextTurnContext = ShouldStopAfterTurnContext;

/** What `prepareFirstTurn` sees: the run's context, its prompts already in it. */
export interface PrepareFirstTurnContext {
  /** The run's context as the run holds it: read it, do not change it (return changes). */
  context: AgentContext;
  /** Messages this run has added so far: its prompts (and the results of reopened tool calls). */
  newMessages: AgentMessage[];
}

/** What `prepareNextTurn` may replace for the next turn; omitted fields stay as they are. */
export interface PrepareNextTurnResult {
  /**
   * The context the next model call uses from now on: its system prompt, tools and messages.
   * Messages in another array than `context.messages` replace the run's transcript (e.g. after
   * compaction); `agent_end` still reports every message the run added.
   */
  context?: AgentContext;
  /** The model for the next turn and those after it. */
  model?: Model;
  /**
   * Messages to add to the transcript before the next turn's steering, each announced with
   * `message_start` / `message_end` after that turn's `turn_start`, so an `Agent` and its store
   * keep them as they keep steering (e.g. `compaction`'s summary).
   */
  append?: AgentMessage[];
}

/** @deprecated use `PrepareNextTurnResult` (the name of what `prepareNextTurn` returns). */
export type AgentLoopTurnUpdate = PrepareNextTurnResult;
