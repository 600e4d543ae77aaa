// "openai/core/error" (2 modules), not "openai" (154): the SDK itself loads at a model's first call (openai-sdk.ts).
import { APIConnectionError, APIError, APIUserAbortError } from "openai/core/error";
import type { ModelFailure } from "../types/model.js";

/**
 * The caller aborted (its signal fired). Never retried; ends the stream with
 * `stopReason: "aborted"`.
 */
export class RequestAbortedError extends Error {
  constructor(message = "Request was aborted") {
    super(message);
    this.name = new.target.name;
  }
}

/** The connection ended after some chunks had arrived but before the response was complete. */
export class StreamInterruptedError extends Error {
  constructor(
    readonly chunks: number,
    options?: { cause?: unknown; detail?: string },
  ) {
    const detail = options?.detail ?? describeCause(options?.cause);
    super(`Connection closed mid-stream after ${chunks} chunks${detail ? ` (${detail})` : ""}`, { cause: options?.cause });
    this.name = new.target.name;
  }
}

const connectionCodes = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "EAI_AGAIN", "UND_ERR_SOCKET"]);

/** True for an abort requested by the caller, however the SDK or fetch reported it. */
export function isAbortError(error: unknown): boolean {
  return (
    error instanceof RequestAbortedError ||
    error instanceof APIUserAbortError ||
    (error instanceof Error && error.name === "AbortError")
  );
}

/**
 * True for failures worth another attempt: 408, 409, 429, 5xx, and a connection that failed,
 * was reset or refused.
 *
 * Contract: aborts and other 4xx are never transient.
 */
export function isTransientError(error: unknown): boolean {
  if (isAbortError(error)) return false;
  if (error instanceof APIConnectionError) return true;
  if (error instanceof APIError) {
    const status = error.status;
    if (status === undefined) return false;
    return status === 408 || status === 409 || status === 429 || status >= 500;
  }
  if (error instanceof StreamInterruptedError) return true;
  return isConnectionFailure(error);
}

/**
 * What `withRetry` and `withFallback` need to know about a failed call: whether it is transient,
 * the HTTP status and the delay the server asked for.
 */
export function modelFailureOf(error: unknown, now: number): ModelFailure {
  const status = error instanceof APIError ? error.status : undefined;
  const retryAfter = retryAfterMs(error, now);
  return {
    transient: isTransientError(error),
    ...(status !== undefined ? { status } : {}),
    ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
  };
}

/**
 * The delay a server asked for with `retry-after-ms` or `Retry-After` (seconds or an HTTP date),
 * in milliseconds; `undefined` when it did not ask.
 */
export function retryAfterMs(error: unknown, now: number): number | undefined {
  if (!(error instanceof APIError) || !error.headers) return undefined;
  const milliseconds = error.headers.get("retry-after-ms");
  if (milliseconds !== null && milliseconds.trim() !== "") {
    const value = Number(milliseconds);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const header = error.headers.get("retry-after");
  if (header === null || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A readable one-line message for any failure of a model call.
 * @example describeProviderError(authError) // "401 Incorrect API key provided: sk-..."
 */
export function describeProviderError(error: unknown): string {
  if (isAbortError(error)) return "Request was aborted";
  if (error instanceof APIConnectionError) {
    const cause = describeCause(error.cause);
    const base = error.message.replace(/\.$/, "");
    return cause ? `${base}: ${cause}` : base;
  }
  // An error the server put inside the stream has no status; its code says what kind it was.
  if (error instanceof APIError && error.status === undefined && typeof error.code === "string" && error.code !== "") {
    return `${error.message} (${error.code})`;
  }
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string" && error !== "") return error;
  // An error the server put in a chunk (`{"error": …}`): its message when it has one, and its code.
  return payloadErrorText(error, undefined) ?? `The server reported an error without a message: ${jsonPreview(error)}`;
}

/**
 * An error payload a server sent (`{ message, code }`) as text: its message (else `fallback`),
 * then its code in brackets; fields of other types are left out, as `[object Object]` says
 * nothing. Undefined when there is neither a message nor a fallback.
 */
export function payloadErrorText(error: unknown, fallback: string | undefined): string | undefined {
  const { message, code } = (typeof error === "object" && error !== null ? error : {}) as { message?: unknown; code?: unknown };
  const text = typeof message === "string" && message !== "" ? message : fallback;
  if (text === undefined) return undefined;
  return (typeof code === "string" && code !== "") || typeof code === "number" ? `${text} (${code})` : text;
}

/** At most 120 characters of `value` as JSON (or as text, when it has no JSON), for an error message. */
export function jsonPreview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/** True when the error (or one of its causes) is a socket failing, not a server answer. */
export function isConnectionFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && connectionCodes.has(code)) return true;
    if (current instanceof TypeError && /terminated|fetch failed|other side closed/i.test(current.message)) return true;
  }
  return false;
}

function describeCause(cause: unknown): string {
  const parts: string[] = [];
  for (let current = cause, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) {
    if (current.message && !parts.includes(current.message)) parts.push(current.message);
  }
  return parts.join(": ");
}
