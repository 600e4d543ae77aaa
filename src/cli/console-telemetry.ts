import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { AgentOptions } from "../agent/agent-options.js";
import { importPeer } from "./import-peer.js";

/** Agent options in, instrumented options out (identity without `--otel`). */
export type Instrument = <Options extends AgentOptions>(options: Options) => Options;

/**
 * `--otel`: every span of every run as one line on `write` (stderr, so the chat's screen and
 * `--json` on stdout stay clean), e.g.
 * `span chat gpt-4.1-mini 812ms parent=3f2a… {"gen_ai.usage.input_tokens":12,…}`.
 * No OTLP: its exporter is not a dependency of rxagent; point an SDK of your own at
 * `withTelemetry` (docs/otel.md) for that.
 */
export async function consoleTelemetry(write: (line: string) => void): Promise<Instrument> {
  const feature = "rxagent --otel";
  const { withTelemetry } = await importPeer(() => import("../otel/index.js"), "@opentelemetry/api", feature);
  const { context } = await importPeer(() => import("@opentelemetry/api"), "@opentelemetry/api", feature);
  const { BasicTracerProvider, SimpleSpanProcessor } = await importPeer(() => import("@opentelemetry/sdk-trace-base"), "@opentelemetry/sdk-trace-base", feature);
  const { AsyncHooksContextManager } = await importPeer(() => import("@opentelemetry/context-async-hooks"), "@opentelemetry/context-async-hooks", feature);
  context.setGlobalContextManager(new AsyncHooksContextManager().enable());
  const exporter: SpanExporter = {
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
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("rxagent-cli");
  return (options) => withTelemetry(options, { tracer });
}
