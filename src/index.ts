/** rxagent: LLM agents as a reactive stream. */

// Protocol
export * from "./types.js";

// The loop
export { agentLoop, agentLoopContinue } from "./streams/agent-loop.js";
export { MessageQueue } from "./streams/message-queue.js";
export { fromAbortSignal } from "./streams/from-abort-signal.js";
export { DEFAULT_TOOL_TIMEOUT_MS } from "./operators/tool-timeout.js";

// Tools
export { defineTool } from "./tools/define-tool.js";
export type { ToolDefinition } from "./tools/define-tool.js";
export { compileSchema, validateArguments } from "./tools/validate-arguments.js";
export type { ArgumentValidation } from "./tools/validate-arguments.js";
export { errorResult, isToolResult, textResult } from "./tools/tool-results.js";

// Operators
export { callHook } from "./operators/call-hook.js";
export { fromHookResult } from "./operators/from-hook-result.js";
export { mergeMapCapped } from "./operators/merge-map-capped.js";
export type { ConcurrencyCap } from "./operators/merge-map-capped.js";

// Errors
export { errorText, HookError, InvalidStateError, RxAgentError } from "./errors.js";

// Agent session
export { Agent } from "./streams/agent.js";
export type { AgentOptions } from "./streams/agent.js";
export { initialAgentState, reduceAgentState } from "./streams/agent-state.js";
export { missingToolResults, INTERRUPTED_TOOL_TEXT, pairToolCalls } from "./streams/repair-transcript.js";
export { toAsyncIterable, BufferOverflowError } from "./streams/to-async-iterable.js";
export type { ToAsyncIterableOptions } from "./streams/to-async-iterable.js";

// Building an assistant message from model events (for providers of one's own)
export { AssistantMessageDraft } from "./model/assistant-message-draft.js";
export type { DraftIdentity } from "./model/assistant-message-draft.js";
export { parsePartialJson } from "./model/partial-json.js";
