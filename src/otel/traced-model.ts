import type { Tracer } from "@opentelemetry/api";
import { context, SpanKind, trace } from "@opentelemetry/api";
import { Observable } from "rxjs";
import { problemOfModelMessage } from "../model/check-model-message.js";
import type { LlmContext, Model, ModelEvent, ModelStreamOptions } from "../types/model.js";
import type { SpanSettings } from "./attributes.js";
import { contentAttribute, failSpan, responseAttributes } from "./attributes.js";
import type { RunSpans } from "./run-spans.js";
import { errorText } from "../util/error-text.js";

/**
 * The model, each call a `chat {model}` span: a child of the run's span (or of the active span
 * outside a traced run), and itself the active context while the call is subscribed, so
 * a provider's HTTP spans nest under it.
 *
 * Contract: the span ends with the call's `done` (response model, finish reason, usage) or
 * `error` (status ERROR, `error.type` the HTTP status, `"aborted"` or `"model_error"`); a call
 * unsubscribed before either ends it with `error.type` `"cancelled"`.
 */
export function tracedModel(model: Model, tracer: Tracer, settings: SpanSettings, runSpans: RunSpans): Model {
  return {
    id: model.id,
    provider: model.provider,
    api: model.api,
    stream(llmContext: LlmContext, options: ModelStreamOptions): Observable<ModelEvent> {
      return new Observable<ModelEvent>((subscriber) => {
        const active = context.active();
        const parent = runSpans.parentFor(active, trace.getSpan(active));
        const span = tracer.startSpan(
          `chat ${model.id}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              "gen_ai.operation.name": "chat",
              "gen_ai.provider.name": model.provider,
              "gen_ai.request.model": model.id,
              ...(settings.conversationId !== undefined ? { "gen_ai.conversation.id": settings.conversationId } : {}),
              ...contentAttribute(settings, "gen_ai.input.messages", llmContext.messages),
              ...contentAttribute(settings, "gen_ai.system_instructions", llmContext.systemPrompt),
            },
          },
          parent,
        );
        runSpans.remember(span, parent);
        let ended = false;
        // The loop checks each event only after this wrapper has read it, so this reads events as
        // untrusted: a throw here came out of the model's `next`, which rxjs rethrows on a timer,
        // an uncaught exception that ended the process.
        const end = (event: ModelEvent): void => {
          if (typeof event !== "object" || event === null) return;
          if (event.type === "done") {
            const problem = problemOfModelMessage(event.message);
            if (problem === undefined) span.setAttributes({ ...responseAttributes(event.message), ...contentAttribute(settings, "gen_ai.output.messages", event.message.content) });
            else failSpan(span, "model_error", `The model's final message ${problem}.`);
          } else if (event.type === "error") {
            const error = problemOfModelMessage(event.error) === undefined ? event.error : undefined;
            if (error !== undefined) span.setAttributes(responseAttributes(error));
            const reported: unknown = typeof event.failure === "object" && event.failure !== null ? event.failure.status : undefined;
            // Only a number or a string: `String()` of an object whose `toString` is no function throws.
            const status = typeof reported === "number" || typeof reported === "string" ? reported : undefined;
            const errorMessage = typeof error?.errorMessage === "string" ? error.errorMessage : undefined;
            failSpan(span, event.reason === "aborted" ? "aborted" : status !== undefined ? String(status) : "model_error", errorMessage);
          } else return;
          ended = true;
          span.end();
        };
        const subscription = context.with(trace.setSpan(parent, span), () =>
          model.stream(llmContext, options).subscribe({
            next: (event) => {
              end(event);
              subscriber.next(event);
            },
            error: (error: unknown) => {
              if (!ended) {
                ended = true;
                failSpan(span, "model_error", errorText(error));
                span.end();
              }
              subscriber.error(error);
            },
            complete: () => subscriber.complete(),
          }),
        );
        return () => {
          subscription.unsubscribe();
          if (ended) return;
          ended = true;
          failSpan(span, "cancelled");
          span.end();
        };
      });
    },
  };
}
