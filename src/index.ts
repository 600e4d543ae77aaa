/** rxagent: LLM agents as a reactive stream. */

// Protocol
export * from "./types.js";

// The loop
export { agentLoop, agentLoopContinue } from "./streams/agent-loop.js";
export { MessageQueue } from "./streams/message-queue.js";
export { fromAbortSignal } from "./streams/from-abort-signal.js";
export { DEFAULT_TOOL_TIMEOUT_MS } from "./operators/tool-calls/tool-timeout.js";

// Tools
export { defineTool } from "./tools/define-tool.js";
export type { ToolDefinition } from "./tools/define-tool.js";
export { compileSchema, validateArguments } from "./tools/validate-arguments.js";
export type { ArgumentValidation, CompiledSchema } from "./tools/validate-arguments.js";
export type { ArgumentsOf, JsonSchema, ToolParameters } from "./tools/tool-schema.js";
export type { StandardJSONSchemaV1, StandardSchemaV1 } from "./tools/standard-schema.js";
export { errorResult, isToolResult, textResult } from "./tools/tool-results.js";
export { FINAL_ANSWER_TOOL, finalAnswerTool } from "./tools/final-answer-tool.js";
export type { FinalAnswerToolOptions } from "./tools/final-answer-tool.js";
export { finalAnswerReminder } from "./streams/structured-output.js";

// Operators
export { callHook } from "./operators/call-hook.js";
export { fromHookResult } from "./operators/from-hook-result.js";
export { mergeMapCapped } from "./operators/merge-map-capped.js";
export type { ConcurrencyCap } from "./operators/merge-map-capped.js";

// Errors
export { errorText, HookError, InvalidConfigError, InvalidStateError, RxAgentError } from "./errors.js";

// Agent session
export { Agent } from "./agent/agent.js";
export type { AgentOptions } from "./agent/agent.js";
export type { RunMessages } from "./agent/agent-promises.js";
export { initialAgentState, reduceAgentState } from "./agent/agent-state.js";
export { missingToolResults, INTERRUPTED_TOOL_TEXT, pairToolCalls } from "./streams/transcript/repair-transcript.js";
export { toAsyncIterable, BufferOverflowError } from "./agent/to-async-iterable.js";
export type { ToAsyncIterableOptions } from "./agent/to-async-iterable.js";

// Building an assistant message from model events (for providers of one's own)
export { AssistantMessageDraft } from "./model/assistant-message-draft.js";
export type { DraftIdentity } from "./model/assistant-message-draft.js";
export { parsePartialJson } from "./model/partial-json.js";
