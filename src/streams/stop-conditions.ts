import { InvalidConfigError } from "../errors.js";
import { toolCallsOf } from "../types/messages.js";
import type { StopCondition, StopConditionContext } from "../types.js";

/**
 * Stops the run once it has finished `count` turns (a turn: one model call and its tool calls).
 *
 * Intuition: `maxTurns` as a value you can put in a list beside other conditions.
 * @example stopWhen: stepCountIs(5)
 */
export function stepCountIs(count: number): StopCondition {
  if (!Number.isInteger(count) || count < 1) throw new InvalidConfigError("stepCountIs", `takes a positive integer, got ${String(count)}.`);
  return named(`stepCountIs(${count})`, ({ turns }) => turns >= count);
}

/**
 * Stops the run after a turn whose assistant message called one of `names` (its tool calls have
 * run and their results are in the transcript).
 *
 * Intuition: a tool that means "done", like the AI SDK's `hasToolCall("answer")`.
 * @example stopWhen: hasToolCall("answer", "give_up")
 */
export function hasToolCall(...names: string[]): StopCondition {
  if (names.length === 0 || names.some((name) => typeof name !== "string")) {
    throw new InvalidConfigError("hasToolCall", "takes one or more tool names (strings).");
  }
  const wanted = new Set(names);
  return named(`hasToolCall(${names.join(", ")})`, ({ message }) => toolCallsOf(message).some((call) => wanted.has(call.name)));
}

/** The budget `usageExceeds` watches; each given field is a limit on its own. */
export interface UsageLimits {
  /** Tokens the model read over the run: `input + cacheRead + cacheWrite` of each call. */
  inputTokens?: number;
  /** Tokens the model wrote over the run. */
  outputTokens?: number;
  /** The run's `cost.total`, in the currency of the models' prices. */
  cost?: number;
}

/**
 * Stops the run after the turn in which its usage (`runUsage` over what it added: every model
 * call and every tool result that reported usage) went past any one of the limits.
 *
 * Intuition: a budget checked between turns; the turn that crosses it still finishes.
 * @example stopWhen: usageExceeds({ inputTokens: 200_000, cost: 0.5 })
 */
export function usageExceeds(limits: UsageLimits): StopCondition {
  const { inputTokens, outputTokens, cost } = limits;
  const given = Object.entries({ inputTokens, outputTokens, cost }).filter(([, limit]) => limit !== undefined);
  const wrong = given.find(([, limit]) => typeof limit !== "number" || !(limit >= 0));
  if (given.length === 0 || wrong) {
    throw new InvalidConfigError("usageExceeds", `takes { inputTokens?, outputTokens?, cost? } with at least one number of 0 or more${wrong ? `; ${wrong[0]} is ${String(wrong[1])}` : ""}.`);
  }
  const parts = given.map(([name, limit]) => `${name}: ${limit}`);
  return named(`usageExceeds({ ${parts.join(", ")} })`, ({ usage }) => {
    if (inputTokens !== undefined && usage.input + usage.cacheRead + usage.cacheWrite > inputTokens) return true;
    if (outputTokens !== undefined && usage.output > outputTokens) return true;
    return cost !== undefined && usage.cost.total > cost;
  });
}

function named(description: string, holds: (context: StopConditionContext) => boolean): StopCondition {
  return Object.assign(holds, { description });
}
