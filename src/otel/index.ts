/**
 * `rxagent/otel`: OpenTelemetry spans for runs, model calls and tool calls (GenAI semantic
 * conventions). Needs the optional peer `@opentelemetry/api`.
 */
export { withTelemetry } from "./with-telemetry.js";
export type { TelemetryOptions } from "./with-telemetry.js";
