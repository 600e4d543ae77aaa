import type { Message, ModelEvent, TextContent } from "../../src/index.js";
import type { BenchToolArguments } from "../workloads/replies.js";

/** What a bench tool returns; both loops accept this shape. */
export interface BenchToolResult {
  content: TextContent[];
  details: undefined;
}

/** What a tool body gets besides its arguments: the call's abort signal, read only if the body wants it. */
export interface ToolBodyContext {
  readonly signal: AbortSignal;
}

/**
 * The body of the one bench tool, shared by every implementation: a plain value for instant
 * tools, a Promise for tools that wait. Each implementation wraps it in its own tool format.
 */
export type ToolBody = (args: BenchToolArguments, context: ToolBodyContext) => BenchToolResult | Promise<BenchToolResult>;

/**
 * A user conversion of transcript messages to model messages, the same mapping for every
 * implementation: `whole` runs it over the whole transcript before each model call (each
 * library's `convertToLlm`), `per-message` converts each message once (rxagent's
 * `convertMessageToLlm`; the floor caches by hand; the reference has no such option).
 */
export interface MessageConversion {
  readonly mode: "whole" | "per-message";
  readonly convert: (message: Message) => Message;
}

/** One session to run: the same replies, tool and limits for every implementation. */
export interface Scenario {
  /** One precomputed reply per model call, in call order. */
  readonly replies: readonly (readonly ModelEvent[])[];
  readonly tool: ToolBody;
  /** Most tool calls running at once; `undefined` is unbounded. */
  readonly maxConcurrency?: number;
  /** When set, each model call waits this long (setTimeout) before streaming its reply. */
  readonly modelDelayMs?: number;
  /** A user conversion instead of the default (keep model messages as they are). */
  readonly conversion?: MessageConversion;
  /** When set, a reply's tool calls are streamed this far apart on real timers (`streamedPieces`). */
  readonly toolCallGapMs?: number;
  /** rxagent only: start each call at its `toolcall_end` (`eagerTools`); the others ignore it. */
  readonly eagerTools?: boolean;
}

/** The one event field the bench looks at; both loops' `AgentEvent`s have it. */
export interface BenchEvent {
  readonly type: string;
}

export type EventSink = (event: BenchEvent) => void;

/** `reference`: pi-agent-core's `runAgentLoop` (its fastest path); `referenceEventStream`: its `agentLoop`. */
export type ImplementationName = "rxagent" | "reference" | "referenceEventStream" | "floor";

export interface Implementation {
  readonly name: ImplementationName;
  /** Whether `maxConcurrency` is supported. */
  readonly supportsConcurrencyLimit: boolean;
  /** Runs one session to its `agent_end`, passing every event to `onEvent`. */
  run(scenario: Scenario, onEvent: EventSink): Promise<void>;
  /**
   * A long-lived agent that has run `scenario` to its end and now sits idle (the library's agent
   * class; for the floor, the transcript a plain loop would keep). For memory per idle agent.
   */
  idleAgent(scenario: Scenario): Promise<unknown>;
  /**
   * One long-lived agent (the library's agent class; the floor keeps a transcript) given
   * `prompts` prompts one after the other, each answered by `scenario.replies` from the first
   * reply on, passing every event to `onEvent`.
   */
  agentSession(scenario: Scenario, prompts: number, onEvent: EventSink): Promise<void>;
}

/** Whether a conversion's implementation with this name can run `conversion`. */
export function supportsConversion(name: ImplementationName, conversion: MessageConversion | undefined): boolean {
  return conversion?.mode !== "per-message" || (name !== "reference" && name !== "referenceEventStream");
}

/** `conversion` over a whole transcript: the model messages, each converted. */
export function convertWhole(conversion: MessageConversion, messages: readonly { role: string }[]): Message[] {
  const converted: Message[] = [];
  for (const message of messages) {
    if (message.role === "user" || message.role === "assistant" || message.role === "toolResult") converted.push(conversion.convert(message as Message));
  }
  return converted;
}

/** The prompt every session starts from. */
export function benchPrompt(text = "Go."): { role: "user"; content: string; timestamp: number } {
  return { role: "user", content: text, timestamp: 0 };
}

/** Resolves after `ms` real milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
