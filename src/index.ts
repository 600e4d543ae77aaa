/**
 * rxagent: LLM agents as a reactive stream.
 *
 * The one public barrel: every name is listed, so plumbing cannot slip in through a re-export
 * (test/index.test.ts pins the runtime names).
 */

// Protocol: messages, model, tools, events
export type {
  AgentMessage,
  AssistantMessage,
  CompactionSummaryMessage,
  CustomAgentMessages,
  FailedModelCall,
  ImageContent,
  Message,
  StopReason,
  TextContent,
  ThinkingContent,
  ToolCall,
  ToolResultMessage,
  Usage,
  UserMessage,
  LlmContext,
  Model,
  ModelErrorEvent,
  ModelEvent,
  ModelFailure,
  ModelStreamOptions,
  ModelTool,
  ThinkingLevel,
  AgentTool,
  AgentToolResult,
  NeedsApprovalResult,
  ToolApprovalContext,
  ToolExecuteResult,
  ToolExecutionContext,
  ToolExecutionMode,
  AgentEndReason,
  AgentEvent,
  AgentEventType,
  QueuedMessages,
} from "./types.js";

// The loop and its configuration
export { agentLoop, agentLoopContinue } from "./streams/agent-loop.js";
export { MessageQueue } from "./streams/message-queue.js";
export { hasToolCall, stepCountIs, usageExceeds } from "./streams/stop-conditions.js";
export type { UsageLimits } from "./streams/stop-conditions.js";
export { queuedFrom } from "./streams/queued-from.js";
export type { MessageQueueName } from "./streams/queued-from.js";
export { compaction } from "./streams/compaction.js";
export type { Compaction, CompactionOptions, Summarizer } from "./streams/compaction.js";
export { compactedMessages, isCompactionSummary } from "./streams/compacted-messages.js";
export { DEFAULT_TOOL_TIMEOUT_MS } from "./operators/tool-calls/tool-timeout.js";
export type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentContext,
  AgentLoopConfig,
  ApprovalDecision,
  BeforeToolCallContext,
  BeforeToolCallResult,
  ConvertMessageToLlm,
  DrainableQueue,
  HookResult,
  PrepareFirstTurnContext,
  PrepareNextTurnContext,
  PrepareNextTurnResult,
  QueueMode,
  ShouldStopAfterTurnContext,
  StopCondition,
  StopConditionContext,
  ToolCallCancellation,
} from "./types.js";

// Tools
export { defineTool } from "./tools/define-tool.js";
export type { ToolDefinition } from "./tools/define-tool.js";
export { validateArguments } from "./tools/validate-arguments.js";
export type { ArgumentValidation } from "./tools/validate-arguments.js";
export type { ArgumentsOf, JsonSchema, ToolParameters } from "./tools/tool-schema.js";
export type { StandardJSONSchemaV1, StandardSchemaV1 } from "./tools/standard-schema.js";
export { errorResult, isToolResult, textResult } from "./tools/tool-results.js";

// Agents made of agents: a tool that runs a sub-agent
export { agentTool, DEFAULT_MAX_AGENT_DEPTH, subAgentTask } from "./agents/agent-tool.js";
export type { AgentToolOptions } from "./agents/agent-tool.js";
export { innermostEventOf, subAgentUpdateOf } from "./types/sub-agent.js";
export type { SubAgentDetails, SubAgentResult, SubAgentUpdate } from "./types.js";

// Structured output: the final answer as a tool call
export { FINAL_ANSWER_TOOL, finalAnswerTool } from "./tools/final-answer-tool.js";
export type { FinalAnswerToolOptions } from "./tools/final-answer-tool.js";
export { finalAnswerReminder } from "./streams/structured-output.js";
export type { OutputOf, OutputSchema } from "./types.js";

// Model middleware: functions Model -> Model
export { withRetry } from "./model/with-retry.js";
export type { RetryOptions } from "./model/with-retry.js";
export { withFallback } from "./model/with-fallback.js";
export type { FallbackOptions } from "./model/with-fallback.js";
export { isTransientFailure } from "./model/transient-failure.js";
export { runUsage } from "./model/run-usage.js";

// Operators
export { mergeMapCapped } from "./operators/merge-map-capped.js";
export type { ConcurrencyCap } from "./operators/merge-map-capped.js";

// Edges: abort signals in, async iterables out
export { fromAbortSignal } from "./streams/from-abort-signal.js";
export { toAsyncIterable, BufferOverflowError } from "./agent/to-async-iterable.js";
export type { ToAsyncIterableOptions } from "./agent/to-async-iterable.js";

// Errors
export { errorText, HookError, InvalidConfigError, InvalidStateError, RxAgentError } from "./errors.js";

// Agent session
export { Agent } from "./agent/agent.js";
export type { AgentOptions } from "./agent/agent.js";
export type { RunReplay } from "./agent/run-replay.js";
export type { RunMessages } from "./agent/agent-promises.js";
export type { AgentListener } from "./agent/run-listeners.js";
export type { AgentSettings, AgentStatePatch } from "./agent/replace-state.js";
export type { AgentOpenOptions } from "./agent/stored-settings.js";
export { initialAgentState, reduceAgentState } from "./agent/agent-state.js";
export { missingToolResults, INTERRUPTED_TOOL_TEXT } from "./streams/transcript/repair-transcript.js";
export type { AgentSnapshot, AgentState, PendingApproval, PromptInput, StoredSettings, StoredTranscript, TranscriptRecord, TranscriptStore } from "./types.js";

// Building an assistant message from model events (for providers of one's own)
export { AssistantMessageDraft } from "./model/assistant-message-draft.js";
export type { AssistantMessageOrigin } from "./model/assistant-message-draft.js";
export { parsePartialJson } from "./model/partial-json.js";

// Old names, kept for one release
export type { AgentLoopTurnUpdate, ToolApprovalAnswer, ToolCallDecision } from "./types.js";
import type { AssistantMessageOrigin as Origin } from "./model/assistant-message-draft.js";
/** @deprecated use `AssistantMessageOrigin` (what every message of one model call shares, not an id). */
export type DraftIdentity = Origin;
