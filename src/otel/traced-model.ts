import type { Tracer } from "@opentelemetry/api";
import { context, SpanKind, trace } from "@opentelemetry/api";
import { Observable } from "rxjs";
import type { LlmContext, Model, ModelEvent, ModelStreamOptions } from "../types/model.js";
import type { SpanSettings } from "./attributes.js";
import { contentAttribute, failSpan, responseAttributes } from "./attributes.js";
import type { RunSpans } from "./run-spans.js";

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
        const end = (event: ModelEvent): void => {
          if (event.type === "done") {
            span.setAttributes({ ...responseAttributes(event.message), ...contentAttribute(settings, "gen_ai.output.messages", event.message.content) });
          } else if (event.type === "error") {
            span.setAttributes(responseAttributes(event.error));
            const status = event.failure?.status;
            failSpan(span, event.reason === "aborted" ? "aborted" : status !== undefined ? String(status) : "model_error", event.error.errorMessage);
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
                failSpan(span, "model_error", error instanceof Error ? error.message : String(error));
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
