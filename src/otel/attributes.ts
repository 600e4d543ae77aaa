import type { Attributes, Span } from "@opentelemetry/api";
import { SpanStatusCode } from "@opentelemetry/api";
import type { AssistantMessage, Usage } from "../types/messages.js";
import { errorText } from "../util/error-text.js";
import { redactCredentials } from "../util/redact-credentials.js";

/** What `withTelemetry` needs besides the tracer; shared by the run, model and tool spans. */
export interface SpanSettings {
  recordContent: boolean;
  /** Strings blanked in recorded content besides credential-like ones. */
  secrets: readonly string[];
  conversationId?: string;
}

/** GenAI semantic-convention token counts of a usage (the cache counts only when non-zero). */
export function usageAttributes(usage: Usage): Attributes {
  return {
    "gen_ai.usage.input_tokens": usage.input,
    "gen_ai.usage.output_tokens": usage.output,
    ...(usage.cacheRead > 0 ? { "gen_ai.usage.cache_read.input_tokens": usage.cacheRead } : {}),
    ...(usage.cacheWrite > 0 ? { "gen_ai.usage.cache_creation.input_tokens": usage.cacheWrite } : {}),
  };
}

/** A model answer's response attributes: the model the server named, why it stopped, its usage. */
export function responseAttributes(message: AssistantMessage): Attributes {
  return {
    "gen_ai.response.model": message.responseModel ?? message.model,
    "gen_ai.response.finish_reasons": [message.stopReason],
    ...(message.responseId !== undefined ? { "gen_ai.response.id": message.responseId } : {}),
    // A provider may leave usage out (the loop fills it in only after the model's span has read it).
    ...(typeof message.usage === "object" && message.usage !== null ? usageAttributes(message.usage) : {}),
  };
}

/** Content as a span attribute: JSON with credentials blanked, or nothing without `recordContent`. */
export function contentAttribute(settings: SpanSettings, key: string, value: unknown): Attributes {
  if (!settings.recordContent || value === undefined) return {};
  try {
    return { [key]: JSON.stringify(redactCredentials(value, settings.secrets)) };
  } catch (error) {
    // Content a model sent nested past the stack, or that is no JSON (a BigInt, a cycle): the span says so and the run goes on.
    return { [key]: `[not recorded: ${errorText(error)}]` };
  }
}

/** Marks the span failed, with `error.type` saying how (`"aborted"`, `"cancelled"`, a status code…). */
export function failSpan(span: Span, errorType: string, message?: string): void {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message !== undefined ? { message: redactCredentials(message) } : {}) });
}
