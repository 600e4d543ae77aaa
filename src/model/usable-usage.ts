import type { Usage } from "../types/messages.js";

/**
 * `usage` with every count and cost a finite number, 0 where it was not one (a string, `null`,
 * `NaN`, a negative number, a field left out): the same object when it already was. Why: a
 * provider's usage of strings or objects made every total it was added to a string or `NaN`
 * (`0 + {}` is `"0[object Object]"`), for the rest of the Agent's life.
 */
export function usableUsage(usage: unknown): Usage {
  const given = (typeof usage === "object" && usage !== null ? usage : {}) as Record<string, unknown>;
  const cost = (typeof given.cost === "object" && given.cost !== null ? given.cost : {}) as Record<string, unknown>;
  // Spelled out, not a loop over the keys: this runs for every message the Agent adds to its totals.
  if (
    given === usage &&
    cost === given.cost &&
    isAmount(given.input) &&
    isAmount(given.output) &&
    isAmount(given.cacheRead) &&
    isAmount(given.cacheWrite) &&
    isAmount(given.totalTokens) &&
    isAmount(cost.input) &&
    isAmount(cost.output) &&
    isAmount(cost.cacheRead) &&
    isAmount(cost.cacheWrite) &&
    isAmount(cost.total)
  ) {
    return usage as Usage;
  }
  return {
    input: amount(given.input),
    output: amount(given.output),
    cacheRead: amount(given.cacheRead),
    cacheWrite: amount(given.cacheWrite),
    totalTokens: amount(given.totalTokens),
    cost: { input: amount(cost.input), output: amount(cost.output), cacheRead: amount(cost.cacheRead), cacheWrite: amount(cost.cacheWrite), total: amount(cost.total) },
  };
}

function isAmount(value: unknown): value is number {
  return typeof value === "number" && value >= 0 && value !== Infinity;
}

/** `value` when it is a finite number of at least 0, else 0: a count or cost as a provider may send it. */
export function amount(value: unknown): number {
  return isAmount(value) ? value : 0;
}
