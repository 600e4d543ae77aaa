/** The protocol: one home for every public type of rxagent. */
export type {
  AgentMessage,
  AssistantMessage,
  CustomAgentMessages,
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
export { emptyUsage, isModelMessage, toolCallsOf } from "./types/messages.js";
export type { LlmContext, Model, ModelEvent, ModelStreamOptions, ModelTool } from "./types/model.js";
export type {
  AgentTool,
  AgentToolResult,
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
  AgentLoopConfig,
  BeforeToolCallContext,
  BeforeToolCallResult,
  ConvertMessageToLlm,
  DrainableQueue,
  HookResult,
  QueueMode,
  ShouldStopAfterTurnContext,
  ToolCallCancellation,
  ToolCallDecision,
  AgentLoopTurnUpdate,
  PrepareNextTurnContext,
} from "./types/loop-config.js";
export type { AgentSnapshot, AgentState, PendingApproval, PromptInput, StoredTranscript, TranscriptRecord, TranscriptStore } from "./types/agent.js";
export type { OutputOf, OutputSchema } from "./types/output.js";
