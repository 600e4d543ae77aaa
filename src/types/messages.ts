/**
 * Message shapes of the agent protocol. Field for field the same as pi-ai's, so a UI or a
 * transcript written for pi-agent-core works with rxagent unchanged.
 */

/** A piece of text in a message. */
export interface TextContent {
  type: "text";
  text: string;
  /** Opaque provider data that must travel back with the text (e.g. a Responses item id). */
  textSignature?: string;
}

/** Reasoning the model showed before answering. */
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  /** Opaque provider data (e.g. encrypted reasoning) to send back on the next call. */
  thinkingSignature?: string;
  /** True when the provider redacted the reasoning; the payload then sits in `thinkingSignature`. */
  redacted?: boolean;
}

/** An image, base64 encoded. */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

/** A tool call requested by the model. `arguments` is the parsed JSON object. */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  thoughtSignature?: string;
  /**
   * The model's argument text, kept only when it was not a valid JSON object (then `arguments`
   * holds the best partial parse). The loop answers such a call with an error result that
   * quotes the parse error, so the model can correct itself.
   */
  rawArguments?: string;
}

/** Token counts and cost of one model call. */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    total: number;
  };
}

/** Why an assistant message ended. */
export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  /** Wire API that produced the message, e.g. `"openai-completions"`. */
  api: string;
  provider: string;
  model: string;
  /** Model name the server reported, when it differs from the requested one. */
  responseModel?: string;
  responseId?: string;
  usage: Usage;
  stopReason: StopReason;
  /** Set when `stopReason` is `"error"` or `"aborted"`: what went wrong, readable. */
  errorMessage?: string;
  /**
   * Set by `withFallback` when earlier models failed before this one answered: who failed and
   * why, in order. `provider`/`model` above name the model that did answer.
   */
  fallbackFrom?: FailedModelCall[];
  /**
   * Set by `withRetry` on the final message when attempts it sent again had reported usage
   * (tokens the server counted before failing): their sum, apart from `usage`, which is this
   * answer's own. `runUsage` and `agent_end.usage` count it.
   */
  retriedUsage?: Usage;
  timestamp: number;
}

/** A model call that failed before its first content, so the next model was asked instead. */
export interface FailedModelCall {
  provider: string;
  model: string;
  errorMessage: string;
  /** What the failed call reported spending (its retries' too), when anything: `runUsage` counts it. */
  usage?: Usage;
}

export interface ToolResultMessage<TDetails = unknown> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isError: boolean;
  /** Tokens and cost the tool spent (from its result's `usage`), when it reported any. */
  usage?: Usage;
  timestamp: number;
}

/** A message a model understands. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/**
 * App-defined messages (notifications, artifacts, ...) that live in the transcript but are not
 * sent to the model unless `convertToLlm` turns them into model messages.
 *
 * Extend by declaration merging:
 * ```ts
 * declare module "rxagent" {
 *   interface CustomAgentMessages { notice: { role: "notice"; text: string; timestamp: number } }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface CustomAgentMessages {}

/**
 * What `compaction` puts in the transcript in place of older messages: a custom message (no
 * model reads it as is; `compactedMessages` turns it into a user message). The transcript keeps
 * every message, the summary after the messages it covers, so a reopened session (any store)
 * reads it back and continues from it.
 *
 * Not part of `AgentMessage` by default, as no custom message is; to type it, merge it in:
 * `declare module "rxagent" { interface CustomAgentMessages { compactionSummary: CompactionSummaryMessage } }`.
 */
export interface CompactionSummaryMessage {
  role: "compactionSummary";
  /** The summarizer's text, standing for every message before the kept ones. */
  summary: string;
  /**
   * How many transcript messages right before this one stay in the model's context after it,
   * word for word (an earlier summary among them does not).
   */
  keptMessages: number;
  /** The estimate of the next call's input tokens that asked for compaction. */
  tokensBefore: number;
  timestamp: number;
}

/** Any message of the transcript: model messages plus app-defined ones. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

/** Usage with every count at zero. */
export function emptyUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/** An assistant message with nothing in it yet, for a model call that failed before its first event. */
export function emptyAssistantMessage(model: { api: string; provider: string; id: string }, timestamp: number): AssistantMessage {
  return { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: emptyUsage(), stopReason: "error", timestamp };
}

/** A message's role; custom messages may have any, or none. */
export function roleOf(message: AgentMessage | undefined): unknown {
  return (message as { role?: unknown } | undefined)?.role;
}

/** True for the three message roles a model understands. */
export function isModelMessage(message: AgentMessage): message is Message {
  const role = roleOf(message);
  return role === "user" || role === "assistant" || role === "toolResult";
}

export function isAssistantMessage(message: AgentMessage | undefined): message is AssistantMessage {
  return roleOf(message) === "assistant";
}

/** An assistant message that failed or was aborted: its tool calls never ran. */
export function isFailedMessage(message: AssistantMessage): boolean {
  return message.stopReason === "error" || message.stopReason === "aborted";
}

/** The tool calls of an assistant message, in the order the model wrote them. */
export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  return message.content.filter((block): block is ToolCall => block.type === "toolCall");
}
