import { describe } from "../model/check-model-message.js";

/** The methods of an `Agent` that the integrations hosting one (the server, Redis sessions, useChat) call first. */
const agentMethods = ["subscribe", "prompt", "abort"] as const;

/**
 * Why a factory's answer (`createAgent`) is not an `Agent`, as the end of "createAgent returned
 * …", or undefined for one. Why not `instanceof Agent`: an Agent made by another copy of the
 * package (its CommonJS build, a second install) is as good. Why at all: the first use of such
 * an answer failed far from the factory ("Cannot read properties of undefined (reading
 * 'subscribe')").
 */
export function problemOfAgent(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return `${describe(value)}, not an Agent`;
  const missing = agentMethods.find((method) => typeof (value as Record<string, unknown>)[method] !== "function");
  return missing === undefined ? undefined : `${describe(value)} without ${missing}(), not an Agent`;
}
