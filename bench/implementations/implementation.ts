import type { ModelEvent, TextContent } from "../../src/index.js";
import type { BenchToolArguments } from "../workloads/replies.js";

/** What a bench tool returns; both loops accept this shape. */
export interface BenchToolResult {
  content: TextContent[];
  details: undefined;
}

/**
 * The body of the one bench tool, shared by every implementation: a plain value for instant
 * tools, a Promise for tools that wait. Each implementation wraps it in its own tool format.
 */
export type ToolBody = (args: BenchToolArguments) => BenchToolResult | Promise<BenchToolResult>;

/** One session to run: the same replies, tool and limits for every implementation. */
export interface Scenario {
  /** One precomputed reply per model call, in call order. */
  readonly replies: readonly (readonly ModelEvent[])[];
  readonly tool: ToolBody;
  /** Most tool calls running at once; `undefined` is unbounded. */
  readonly maxConcurrency?: number;
  /** When set, each model call waits this long (setTimeout) before streaming its reply. */
  readonly modelDelayMs?: number;
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

export type ImplementationName = "rxagent" | "reference" | "floor";

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
}

/** The prompt every session starts from. */
export function benchPrompt(): { role: "user"; content: string; timestamp: number } {
  return { role: "user", content: "Go.", timestamp: 0 };
}

/** Resolves after `ms` real milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
