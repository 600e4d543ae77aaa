import type { Context, Span } from "@opentelemetry/api";

/**
 * The `execute_tool` spans of one `withTelemetry`: the open ones by tool call id, which the run's
 * events open and close (`traceRun`) and tool calls run inside (`tracedToolCall`); and for
 * each of these and of the `chat` spans, its run's context.
 *
 * Why the run's context: a tool's promise resolving (or the model stream completing) is what
 * starts the next turn, so the next model call is subscribed with that span active. `tracedModel`
 * looks the run up here so each `chat` span stays the run's child, not the previous span's.
 */
export class RunSpans {
  readonly open = new Map<string, Span>();
  private readonly runs = new WeakMap<Span, Context>();

  add(toolCallId: string, span: Span, runContext: Context): void {
    this.open.set(toolCallId, span);
    this.remember(span, runContext);
  }

  /** Notes the run a span (a tool's or a model call's) belongs to. */
  remember(span: Span, runContext: Context): void {
    this.runs.set(span, runContext);
  }

  /** The context to parent a model call on: the run's when `active` is inside one of our spans. */
  parentFor(active: Context, activeSpan: Span | undefined): Context {
    return (activeSpan && this.runs.get(activeSpan)) ?? active;
  }
}
