import { context } from "@opentelemetry/api";
import { AsyncHooksContextManager } from "@opentelemetry/context-async-hooks";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach } from "vitest";

/**
 * The in-memory tracing of the otel specs: a tracer whose spans `exporter` keeps, and the
 * async-hooks context manager registered for the file's tests (the exporter emptied before each).
 */
export function useTracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncHooksContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
  });
  afterAll(() => {
    context.disable();
  });
  beforeEach(() => exporter.reset());
  return { exporter, tracer: provider.getTracer("test") };
}

export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
export const idOf = (span: ReadableSpan): string => span.spanContext().spanId;
export const named = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((span) => span.name === name);
export const eventsOf = (span: ReadableSpan | undefined) => span?.events.map((event) => [event.name, event.attributes ?? {}]);
