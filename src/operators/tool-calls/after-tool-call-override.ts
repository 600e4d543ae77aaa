import { describe } from "../../model/check-model-message.js";
import { isToolResult } from "../../tools/tool-results.js";
import type { AfterToolCallResult, AgentToolResult } from "../../types.js";
import { errorText } from "../../util/error-text.js";
import { nestsDeeperThan, tooDeepText } from "../../util/json-depth.js";

/** An executed result with `afterToolCall`'s override applied. */
export interface OverriddenResult {
  result: AgentToolResult;
  isError: boolean;
}

/**
 * Applies `afterToolCall`'s answer field by field (omitted fields keep their value), or returns
 * why the answer is not an override.
 *
 * Checked as a tool's own result is checked: a hook answering `{ content: "nope" }` must not
 * put a string where the transcript and every provider expect an array of parts, nor `details`
 * nested deeper than `maxJsonDepth`, which every step after it (events, wire, store) would
 * recurse into until the stack overflows (issue 27).
 */
export function overrideResult(result: AgentToolResult, isError: boolean, override: AfterToolCallResult, maxJsonDepth: number): OverriddenResult | string {
  // Reading the answer runs the hook's own code (getters, a Proxy's traps): a throw there is the
  // hook's answer being unusable, not the run's failure.
  try {
    return checkedOverride(result, isError, override, maxJsonDepth);
  } catch (error) {
    return `it could not be read (${errorText(error)})`;
  }
}

function checkedOverride(result: AgentToolResult, isError: boolean, override: AfterToolCallResult, maxJsonDepth: number): OverriddenResult | string {
  if (typeof override !== "object" || override === null || Array.isArray(override)) {
    return `it answered ${describe(override)}, not an override object`;
  }
  if (override.content !== undefined && !isToolResult({ content: override.content })) {
    return "its content is not an array of text or image parts";
  }
  for (const field of ["isError", "terminate"] as const) {
    const value = override[field];
    if (value !== undefined && typeof value !== "boolean") return `its ${field} is ${describe(value)}, not a boolean`;
  }
  if (override.usage !== undefined && (typeof override.usage !== "object" || override.usage === null)) {
    return `its usage is ${describe(override.usage)}, not an object`;
  }
  for (const field of ["content", "details", "usage"] as const) {
    if (nestsDeeperThan(override[field], maxJsonDepth)) return `its ${field} values ${tooDeepText(maxJsonDepth)}`;
  }
  const overridden: AgentToolResult = {
    content: override.content ?? result.content,
    details: override.details ?? result.details,
  };
  const terminate = override.terminate ?? result.terminate;
  if (terminate !== undefined) overridden.terminate = terminate;
  const usage = override.usage ?? result.usage;
  if (usage !== undefined) overridden.usage = usage;
  return { result: overridden, isError: override.isError ?? isError };
}
