/** The protocol: one home for every public type of rxagent (types only; its helpers stay in their modules). */
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
} from "./types/messages.js";
export type { LlmContext, Model, ModelErrorEvent, ModelEvent, ModelFailure, ModelStreamOptions, ModelTool, ThinkingLevel } from "./types/model.js";
export type {
  AgentTool,
  AgentToolResult,
  NeedsApprovalResult,
  ToolApprovalAnswer,
  ToolApprovalContext,
  ToolExecuteResult,
  ToolExecutionContext,
  ToolExecutionMode,
} from "./types/tools.js";
export type { AgentEndReason, AgentEvent, AgentEventType, QueuedMessages } from "./types/events.js";
export type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentContext,
  ApprovalDecision,
  AgentLoopConfig,
  BeforeToolCallContext,
  BeforeToolCallResult,
  ConvertMessageToLlm,
  DrainableQueue,
  HookResult,
  QueueMode,
  ShouldStopAfterTurnContext,
  StopCondition,
  StopConditionContext,
  ToolCallCancellation,
  ToolCallDecision,
  AgentLoopTurnUpdate,
  PrepareFirstTurnContext,
  PrepareNextTurnContext,
  PrepareNextTurnResult,
} from "./types/loop-config.js";
export type { AgentSnapshot, AgentState, PendingApproval, PromptInput, StoredSettings, StoredTranscript, TranscriptRecord, TranscriptStore } from "./types/agent.js";
export type { OutputOf, OutputSchema } from "./types/output.js";
export type { SubAgentDetails, SubAgentResult, SubAgentUpdate } from "./types/sub-agent.js";
