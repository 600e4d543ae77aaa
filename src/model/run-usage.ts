import type { AgentMessage, Usage } from "../types/messages.js";
import { emptyUsage, isAssistantMessage, roleOf } from "../types/messages.js";

/**
 * The tokens and cost of a run, summed in one place: every assistant message (failed ones too,
 * so a fallback's failed call counts) and every tool result that reported `usage`.
 *
 * Intuition: `agent_end.messages` holds everything the run added, so its sum is the run's bill.
 * Calls retried before their first token are not messages and reported no usage (the server
 * refused them), so they add nothing.
 * @example agent_end: (event) => log(runUsage(event.messages).cost.total)
 */
export function runUsage(messages: readonly AgentMessage[]): Usage {
  const total = emptyUsage();
  for (const message of messages) {
    const usage = isAssistantMessage(message) ? message.usage : roleOf(message) === "toolResult" ? (message as { usage?: Usage }).usage : undefined;
    if (usage === undefined) continue;
    total.input += usage.input;
    total.output += usage.output;
    total.cacheRead += usage.cacheRead;
    total.cacheWrite += usage.cacheWrite;
    total.totalTokens += usage.totalTokens;
    total.cost.input += usage.cost.input;
    total.cost.output += usage.cost.output;
    total.cost.cacheRead += usage.cost.cacheRead;
    total.cost.cacheWrite += usage.cost.cacheWrite;
    total.cost.total += usage.cost.total;
  }
  return total;
}
