import type OpenAI from "openai";
import type { SchedulerLike } from "rxjs";
import type { ToolCall, Usage } from "../types/messages.js";

/** How hard a reasoning model thinks, as the OpenAI API names it. */
export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh";

/** Prices in dollars per million tokens, used to fill `usage.cost`. */
export interface ModelCost {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** Options both OpenAI models share. */
export interface OpenAIModelOptions {
  /** Model name sent to the server, e.g. `"gpt-4.1-mini"` or `"llama3.2"`. */
  model: string;
  /** Default: `OPENAI_API_KEY`; with a `baseURL` and no key, a placeholder (local servers ignore it). */
  apiKey?: string;
  /** Default: `OPENAI_BASE_URL`, else the OpenAI API. E.g. `"http://localhost:11434/v1"` for Ollama. */
  baseURL?: string;
  /**
   * A client you configured yourself (Azure, proxies, custom fetch). `apiKey`, `baseURL` and
   * `headers` are then ignored.
   *
   * Contract: its own retries are bypassed per request (`maxRetries: 0`); ours apply.
   */
  client?: OpenAI;
  /** Reported as `message.provider`. Default `"openai"`. */
  provider?: string;
  /** Extra HTTP headers on every request. */
  headers?: Record<string, string>;
  maxTokens?: number;
  temperature?: number;
  /** Sent only when set; servers without reasoning reject it. */
  reasoningEffort?: ReasoningEffort;
  /** Marks every tool `strict` (the schema must then satisfy OpenAI's strict subset). */
  strictTools?: boolean;
  /**
   * Fields merged into the request body last, for server-specific options.
   * @example extraBody: { top_k: 40 }
   */
  extraBody?: Record<string, unknown>;
  /** Retries of transient failures before the first token. Default 2. */
  maxRetries?: number;
  /** Default 500. */
  retryBaseDelayMs?: number;
  /** Default 8000. */
  retryMaxDelayMs?: number;
  /** Jitter source in [0, 1). Default `Math.random`. */
  random?: () => number;
  /** Source of time: message timestamps and retry waits. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Fills `usage.cost`; zero when omitted. */
  cost?: ModelCost;
}

/**
 * A new client of the SDK's class `OpenAIClient` (see `loadOpenAIClient`) with our defaults.
 *
 * Contract: throws when no credentials can be found (the caller turns that into an `error`
 * event).
 */
export function createOpenAIClient(options: OpenAIModelOptions, OpenAIClient: typeof OpenAI): OpenAI {
  const baseURL = resolveBaseURL(options);
  const apiKey = options.apiKey ?? globalThis.process?.env?.["OPENAI_API_KEY"] ?? (baseURL ? "not-needed" : undefined);
  return new OpenAIClient({
    apiKey,
    baseURL,
    maxRetries: 0,
    ...(options.headers ? { defaultHeaders: options.headers } : {}),
  });
}

/**
 * A tool call's arguments as sent back to the model: what the model wrote when it was not a JSON
 * object (`rawArguments`), so the transcript matches the error result that quotes it, else JSON.
 */
export function argumentsText(toolCall: ToolCall): string {
  return toolCall.rawArguments ?? JSON.stringify(toolCall.arguments);
}

/** The server the model talks to: the given client's, `baseURL`, or `OPENAI_BASE_URL`. */
export function resolveBaseURL(options: OpenAIModelOptions): string | undefined {
  return options.client?.baseURL ?? options.baseURL ?? globalThis.process?.env?.["OPENAI_BASE_URL"] ?? undefined;
}

/** Token counts as OpenAI reports them, for both APIs. */
export interface RawUsage {
  input: number;
  output: number;
  cached: number;
  total?: number;
}

/**
 * Usage in rxagent's shape: `input` excludes cached prompt tokens (they are `cacheRead`),
 * `output` includes reasoning tokens (OpenAI counts them in completion tokens already).
 */
export function toUsage(raw: RawUsage, cost: ModelCost | undefined): Usage {
  const input = Math.max(0, raw.input - raw.cached);
  const output = raw.output;
  const cacheRead = raw.cached;
  const price = (tokens: number, perMillion: number | undefined): number => (tokens * (perMillion ?? 0)) / 1_000_000;
  const inputCost = price(input, cost?.input);
  const outputCost = price(output, cost?.output);
  const cacheReadCost = price(cacheRead, cost?.cacheRead);
  return {
    input,
    output,
    cacheRead,
    cacheWrite: 0,
    totalTokens: raw.total ?? input + output + cacheRead,
    cost: {
      input: inputCost,
      output: outputCost,
      cacheRead: cacheReadCost,
      cacheWrite: 0,
      total: inputCost + outputCost + cacheReadCost,
    },
  };
}

/** A `data:` URL for an image block. */
export function imageDataUrl(image: { data: string; mimeType: string }): string {
  return `data:${image.mimeType};base64,${image.data}`;
}
