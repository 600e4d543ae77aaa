/**
 * `rxagent/pi-agent-core`: a drop-in for `@mariozechner/pi-agent-core` 0.73 — the same exports
 * with the same signatures, running on rxagent's loop (`agentLoop`, `fromPiAi`). Swap the engine
 * of an application built on the reference with npm `overrides` (docs/pi-agent-core-drop-in.md).
 * Needs the optional peer `@mariozechner/pi-ai`.
 */
export { Agent } from "./agent.js";
export type { AgentOptions } from "./agent.js";
export { agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue } from "./agent-loop.js";
export type { AgentEventSink } from "./agent-loop.js";
export { streamProxy } from "./proxy.js";
export type { ProxyAssistantMessageEvent, ProxyStreamOptions } from "./proxy.js";
export type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentContext,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentState,
  AgentTool,
  AgentToolCall,
  AgentToolResult,
  AgentToolUpdateCallback,
  BeforeToolCallContext,
  BeforeToolCallResult,
  CustomAgentMessages,
  ShouldStopAfterTurnContext,
  StreamFn,
  ThinkingLevel,
  ToolExecutionMode,
} from "./types.js";
