import { compileSchema } from "../../tools/validate-arguments.js";
import type { AgentLoopConfig } from "../../types.js";
import type { PreparedToolCall } from "./tool-batch.js";

/** The loop-wide tool timeout when `toolTimeoutMs` is not set: 3 minutes, as in the reference. */
export const DEFAULT_TOOL_TIMEOUT_MS = 180_000;

/**
 * How long one prepared call may run, in milliseconds, or `undefined` for no limit.
 *
 * The most specific limit wins: the call's own `timeout` argument in seconds (only when the
 * tool's schema declares one; `0` disables the timer, a negative or non-finite value is
 * ignored), then the tool's `timeoutMs`, then the loop's `toolTimeoutMs` (`0` disables; a
 * negative or non-finite value falls back to the default so a typo cannot remove the limit).
 */
export function toolTimeoutMs(prepared: PreparedToolCall, config: AgentLoopConfig): number | undefined {
  const requested = requestedTimeoutMs(prepared);
  if (requested !== undefined) return requested === 0 ? undefined : requested;
  if (prepared.tool.timeoutMs !== undefined) return prepared.tool.timeoutMs;
  const loopWide = config.toolTimeoutMs;
  if (loopWide === undefined || !Number.isFinite(loopWide) || loopWide < 0) return DEFAULT_TOOL_TIMEOUT_MS;
  return loopWide === 0 ? undefined : loopWide;
}

/**
 * The error text of a call that ran past `timeoutMs`. A tool's own `timeoutMs` keeps rxagent's
 * short text; the loop-wide and per-call limits use the reference's words, which tell the model
 * how to ask for more time.
 */
export function toolTimeoutText(prepared: PreparedToolCall, timeoutMs: number): string {
  const name = prepared.toolCall.name;
  if (prepared.tool.timeoutMs === timeoutMs && requestedTimeoutMs(prepared) === undefined) {
    return `Tool "${name}" timed out after ${timeoutMs} ms`;
  }
  const seconds = Math.round(timeoutMs / 100) / 10;
  return (
    `Tool "${name}" timed out after ${seconds} seconds. The tool call exceeded its time limit; re-issue it with a longer ` +
    'timeout (for example a "timeout" argument in seconds) or split the work into smaller steps.'
  );
}

/**
 * The call's `timeout` argument in milliseconds, when its tool declares one and it is usable.
 * Read from the JSON Schema the model is sent (compiled once per schema), so every schema kind
 * counts: a zod or valibot schema has no `properties` of its own.
 */
function requestedTimeoutMs(prepared: PreparedToolCall): number | undefined {
  const properties = (compileSchema(prepared.tool.parameters).modelSchema as { properties?: Record<string, unknown> }).properties;
  if (properties?.["timeout"] === undefined) return undefined;
  const seconds = (prepared.args as { timeout?: unknown } | undefined)?.timeout;
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return undefined;
  return seconds * 1000;
}
