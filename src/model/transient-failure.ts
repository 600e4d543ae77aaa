import type { ModelErrorEvent } from "../types/model.js";

// What providers that report no `failure` (pi-ai, cassettes, scripted models) write in
// `errorMessage` for a transient failure: a leading 408/409/429/5xx status (Anthropic, OpenAI
// SDKs), a JSON body's `"code": 5xx` (Gemini), or a socket's words.
const transientMessage =
  /^(408|409|429|5\d\d)\b|"code":\s*(408|409|429|5\d\d)\b|rate.?limit|overloaded|too many requests|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|socket hang up|fetch failed|connection (error|reset|closed)|terminated/i;

/**
 * True for a failed model call worth another attempt: the provider's own `failure.transient`
 * when it reported one, else a 408/409/429/5xx status or a connection failure read from
 * `errorMessage`.
 *
 * Contract: an abort is never transient.
 * @example isTransientFailure({ type: "error", reason: "error", error: { ...message, errorMessage: "429 Rate limit" } }) // true
 */
export function isTransientFailure(event: ModelErrorEvent): boolean {
  if (event.reason === "aborted") return false;
  const failure: unknown = event.failure;
  if (typeof failure === "object" && failure !== null) return (failure as { transient?: unknown }).transient === true;
  const errorMessage: unknown = event.error.errorMessage;
  return typeof errorMessage === "string" && transientMessage.test(errorMessage);
}
