/**
 * The public types of `@mariozechner/pi-agent-core` 0.73, declared again for the drop-in: code
 * written against the reference compiles against `rxagent/pi-agent-core` unchanged
 * (test/pi-agent-core/drop-in-types.test.ts checks both directions of assignability).
 *
 * Why `any` appears here, against the house rule: these are the reference's signatures
 * (`Model<any>`, `args: any`, `AgentTool<any>`), and code written for it reads `event.args.path`
 * without a cast. `unknown` would break that code, which is what a drop-in must not do.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
import type {
  AssistantMessage,
  AssistantMessageEvent,
  ImageContent,
  Message,
  Model,
  SimpleStreamOptions,
  Static,
  streamSimple,
  TextContent,
  Tool,
  ToolResultMessage,
  TSchema,
} from "@mariozechner/pi-ai";

/**
 * Opens one model response. Contract: failures are data (a final message with `stopReason`
 * `"error"` or `"aborted"`); a throw or a rejection ends the run (the `Agent` records it as a
 * failed assistant message).
 */
export type StreamFn = (
  ...args: Parameters<typeof streamSimple>
) => ReturnType<typeof streamSimple> | Promise<ReturnType<typeof streamSimple>>;

/** How the tool calls of one assistant message run: one after another, or side by side. */
export type ToolExecutionMode = "sequential" | "parallel";

/** A tool call block of an assistant message. */
export type AgentToolCall = Extract<AssistantMessage["content"][number], { type: "toolCall" }>;

/** `beforeToolCall`'s answer: `block: true` turns the call into an error result saying `reason`. */
export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
}

/** `afterToolCall`'s answer: each field given replaces the result's own (no deep merge). */
export interface AfterToolCallResult {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  isError?: boolean;
  /** Stop after this batch; only when every result of the batch says so. */
  terminate?: boolean;
}

export interface BeforeToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: AgentToolCall;
  /** The arguments after validation. */
  args: unknown;
  context: AgentContext;
}

export interface AfterToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: AgentToolCall;
  args: unknown;
  /** The result as the tool returned it, before this hook's overrides. */
  result: AgentToolResult<any>;
  isError: boolean;
  context: AgentContext;
}

export interface ShouldStopAfterTurnContext {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  context: AgentContext;
  /** What the run returns if it stops here (a prompt run's prompts included). */
  newMessages: AgentMessage[];
}

/** The low-level loop's configuration: pi-ai's stream options plus the loop's hooks. */
export interface AgentLoopConfig extends SimpleStreamOptions {
  model: Model<any>;
  /** Turns the transcript into what the model sees, before each model call. Contract: must not throw. */
  convertToLlm: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  /** Edits the transcript (pruning, injecting) before `convertToLlm`. Contract: must not throw. */
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  /** The API key for each model call (short-lived tokens). Contract: must not throw. */
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  /** Asked after each turn's `turn_end`; `true` ends the run before the queues are polled. */
  shouldStopAfterTurn?: (context: ShouldStopAfterTurnContext) => boolean | Promise<boolean>;
  /** Messages to add before the next model call (polled after each turn). */
  getSteeringMessages?: () => Promise<AgentMessage[]>;
  /** Messages to run once the agent would otherwise stop. */
  getFollowUpMessages?: () => Promise<AgentMessage[]>;
  /** Default: "parallel". */
  toolExecution?: ToolExecutionMode;
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
}

/** Reasoning effort; "off" sends none. */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

/**
 * Extended by applications through declaration merging, to add message kinds of their own:
 * `declare module "rxagent/pi-agent-core" { interface CustomAgentMessages { note: NoteMessage } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface CustomAgentMessages {}

/** A model message or one of the application's own. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

/**
 * The `Agent`'s state. Assigning `tools` or `messages` stores a copy of the array; the array
 * read back is the live one (pushing into it sticks).
 */
export interface AgentState {
  systemPrompt: string;
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
  set tools(tools: AgentTool<any>[]);
  get tools(): AgentTool<any>[];
  set messages(messages: AgentMessage[]);
  get messages(): AgentMessage[];
  /** True from `prompt()` until the listeners of `agent_end` have settled. */
  readonly isStreaming: boolean;
  /** The assistant message being streamed, if any. */
  readonly streamingMessage?: AgentMessage;
  /** Ids of the tool calls running now. */
  readonly pendingToolCalls: ReadonlySet<string>;
  /** The error of the last failed or aborted turn. */
  readonly errorMessage?: string;
}

/** What a tool returns, finally or as progress. */
export interface AgentToolResult<T> {
  content: (TextContent | ImageContent)[];
  details: T;
  /** Stop after this batch; only when every result of the batch says so. */
  terminate?: boolean;
}

export type AgentToolUpdateCallback<T = any> = (partialResult: AgentToolResult<T>) => void;

/** A tool: pi-ai's description of it, a label, and how it runs. */
export interface AgentTool<TParameters extends TSchema = TSchema, TDetails = any> extends Tool<TParameters> {
  label: string;
  /** Reshapes raw arguments before validation (older argument shapes, say). */
  prepareArguments?: (args: unknown) => Static<TParameters>;
  /** Throws on failure; the loop turns the throw into an error result. */
  execute: (
    toolCallId: string,
    params: Static<TParameters>,
    signal?: AbortSignal,
    onUpdate?: AgentToolUpdateCallback<TDetails>,
  ) => Promise<AgentToolResult<TDetails>>;
  /** Overrides the loop's mode for this tool. */
  executionMode?: ToolExecutionMode;
}

/** The context one loop starts from. */
export interface AgentContext {
  systemPrompt: string;
  messages: AgentMessage[];
  tools?: AgentTool<any>[];
}

/** The events of a run, in the reference's shapes (rxagent's own extra fields are left out). */
export type AgentEvent =
  | { type: "agent_start" }
  | { type: "agent_end"; messages: AgentMessage[] }
  | { type: "turn_start" }
  | { type: "turn_end"; message: AgentMessage; toolResults: ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AgentMessage; assistantMessageEvent: AssistantMessageEvent }
  | { type: "message_end"; message: AgentMessage }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: any }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; args: any; partialResult: any }
  | { type: "tool_execution_end"; toolCallId: string; toolName: string; result: any; isError: boolean };
