import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { AgentOptions } from "../agent/agent-options.js";
import { importPeer } from "./import-peer.js";

/**
 * Agent options in, instrumented options out (identity without `--otel`); `conversationId` (a
 * served session's id, a chat's own) goes on every span as `gen_ai.conversation.id`.
 */
export type Instrument = <Options extends AgentOptions>(options: Options, conversationId?: string) => Options;

/** What `--otel` sets up: the instrumentation, and the flush that sends the spans not yet sent. */
export interface Telemetry {
  readonly instrument: Instrument;
  readonly flush: () => Promise<void>;
}

/**
 * `--otel`: every span of every run as one line on `write` (stderr, so the chat's screen and
 * `--json` on stdout stay clean), e.g.
 * `span chat gpt-4.1-mini 812ms parent=3f2a… {"gen_ai.usage.input_tokens":12,…}`.
 * With `otlpEndpoint` (`OTEL_EXPORTER_OTLP_ENDPOINT`) the spans go to that collector instead, as
 * OTLP/HTTP JSON at `{endpoint}/v1/traces`, through `@opentelemetry/exporter-trace-otlp-http`: an
 * optional package, loaded only then, and named in the error when it is missing.
 */
export async function consoleTelemetry(write: (line: string) => void, otlpEndpoint?: string): Promise<Telemetry> {
  const feature = "rxagent --otel";
  const { withTelemetry } = await importPeer(() => import("../otel/index.js"), "@opentelemetry/api", feature);
  const { context } = await importPeer(() => import("@opentelemetry/api"), "@opentelemetry/api", feature);
  const { BasicTracerProvider, SimpleSpanProcessor } = await importPeer(() => import("@opentelemetry/sdk-trace-base"), "@opentelemetry/sdk-trace-base", feature);
  const { AsyncHooksContextManager } = await importPeer(() => import("@opentelemetry/context-async-hooks"), "@opentelemetry/context-async-hooks", feature);
  context.setGlobalContextManager(new AsyncHooksContextManager().enable());
  const exporter = otlpEndpoint ? await otlpExporter(feature) : lineExporter(write);
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer("rxagent-cli");
  return {
    instrument: (options, conversationId) => withTelemetry(options, { tracer, ...(conversationId === undefined ? {} : { conversationId }) }),
    flush: () => provider.forceFlush(),
  };
}

/** The exporter reads `OTEL_EXPORTER_OTLP_ENDPOINT` (and its headers) itself, as every OTel SDK does. */
async function otlpExporter(feature: string): Promise<SpanExporter> {
  const { OTLPTraceExporter } = await importPeer(() => import("@opentelemetry/exporter-trace-otlp-http"), "@opentelemetry/exporter-trace-otlp-http", feature);
  return new OTLPTraceExporter();
}

function lineExporter(write: (line: string) => void): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: Parameters<SpanExporter["export"]>[1]) {
      for (const span of spans) {
        const milliseconds = span.duration[0] * 1000 + Math.round(span.duration[1] / 1e6);
        const parent = span.parentSpanContext?.spanId;
        write(`span ${span.name} ${milliseconds}ms id=${span.spanContext().spanId}${parent ? ` parent=${parent}` : ""} ${JSON.stringify(span.attributes)}\n`);
      }
      done({ code: 0 });
    },
    shutdown: () => Promise.resolve(),
  };
}
