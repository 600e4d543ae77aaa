import type { AgentMessage, AssistantMessage, Usage } from "../types/messages.js";
import { emptyUsage, isAssistantMessage, roleOf } from "../types/messages.js";
import { usableUsage } from "./usable-usage.js";

/**
 * The tokens and cost of a run, summed in one place: every assistant message (failed ones too),
 * what the calls before it reported (`spentBy`: attempts `withRetry` sent again, models
 * `withFallback` left), and every tool result that reported `usage`.
 *
 * Intuition: `agent_end.messages` holds everything the run added, so its sum is the run's bill.
 * @example agent_end: (event) => log(runUsage(event.messages).cost.total)
 */
export function runUsage(messages: readonly AgentMessage[]): Usage {
  const total = emptyUsage();
  for (const message of messages) {
    if (isAssistantMessage(message)) addSpentBy(total, message);
    else if (roleOf(message) === "toolResult") addUsage(total, (message as { usage?: unknown }).usage);
  }
  return total;
}

/**
 * What getting one assistant message cost: its own `usage`, its `retriedUsage` (failed attempts
 * `withRetry` sent again) and the `usage` of each call in its `fallbackFrom`.
 *
 * Why the failed calls count: a call can fail before its first content after the server reported
 * tokens (Anthropic's `message_start`, then `overloaded_error`), and the run's bill should say so.
 */
export function spentBy(message: AssistantMessage): Usage {
  const total = emptyUsage();
  addSpentBy(total, message);
  return total;
}

/** True when a usage counts any token or any cost. */
export function hasUsage(usage: Usage): boolean {
  return usage.totalTokens > 0 || usage.input > 0 || usage.output > 0 || usage.cacheRead > 0 || usage.cacheWrite > 0 || usage.cost.total > 0;
}

function addSpentBy(total: Usage, message: AssistantMessage): void {
  addUsage(total, message.usage);
  addUsage(total, message.retriedUsage);
  // Read defensively: a message from a store or a provider of one's own may carry anything.
  if (Array.isArray(message.fallbackFrom)) for (const failed of message.fallbackFrom) addUsage(total, (failed as { usage?: unknown } | undefined)?.usage);
}

/** Adds `usage` to `total` in place; a missing or malformed usage (no `cost`) adds nothing, a count or cost that is not a finite number 0 (`usableUsage`). */
export function addUsage(total: Usage, usage: unknown): void {
  if (typeof usage !== "object" || usage === null) return;
  if (typeof (usage as { cost?: unknown }).cost !== "object" || (usage as { cost?: unknown }).cost === null) return;
  const counted = usableUsage(usage);
  total.input += counted.input;
  total.output += counted.output;
  total.cacheRead += counted.cacheRead;
  total.cacheWrite += counted.cacheWrite;
  total.totalTokens += counted.totalTokens;
  total.cost.input += counted.cost.input;
  total.cost.output += counted.cost.output;
  total.cost.cacheRead += counted.cost.cacheRead;
  total.cost.cacheWrite += counted.cost.cacheWrite;
  total.cost.total += counted.cost.total;
}
