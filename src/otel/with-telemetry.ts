import type { Tracer } from "@opentelemetry/api";
import { trace } from "@opentelemetry/api";
import { pipe } from "rxjs";
import type { AgentLoopConfig } from "../types/loop-config.js";
import type { SpanSettings } from "./attributes.js";
import { RunSpans } from "./run-spans.js";
import { traceRun } from "./trace-run.js";
import { tracedModel } from "./traced-model.js";
import { tracedToolCall } from "./traced-tool-call.js";

export interface TelemetryOptions {
  /** Default: `trace.getTracer("rxagent")` of the global tracer provider. */
  tracer?: Tracer;
  /**
   * Record messages, tool arguments and results on the spans (credentials blanked as cassettes
   * do). Default false: spans carry names, ids, models, usage and status only.
   */
  recordContent?: boolean;
  /** Further strings to blank in recorded content, e.g. the API key in use. */
  secrets?: readonly string[];
  /** `gen_ai.conversation.id` on every span, e.g. the session's id. */
  conversationId?: string;
  /** `gen_ai.agent.name`, and the run span's name `invoke_agent {agentName}`. */
  agentName?: string;
}

/**
 * The loop config or `Agent` options, instrumented: each run an `invoke_agent` span, each model
 * call a `chat {model}` span, each tool call an `execute_tool {tool}` span, per the OpenTelemetry
 * GenAI semantic conventions.
 *
 * ```text
 * invoke_agent                     (gen_ai.usage.* summed over the run, rxagent.usage.cost)
 * ├─ chat gpt-4.1-mini             (request/response model, finish reasons, usage)
 * ├─ execute_tool get_weather      (tool name, call id; approval and slot-wait events)
 * ├─ execute_tool get_time         (parallel calls are siblings)
 * └─ chat gpt-4.1-mini
 * ```
 *
 * Contract: the chat span is the active context while the model call is subscribed, the tool
 * span while `execute` runs, for every model and tool of the run: the config's, those of the
 * loop's context, and those `prepareNextTurn` or `Agent.configure` swap in (through the loop's
 * `observeModel` and `observeToolCall`, which keep any already set, inside). Active contexts
 * cross promises and timers only with a context manager registered (e.g. `AsyncHooksContextManager`
 * or the Node SDK's default). Any `observeRun` already set still sees every event.
 * @example const agent = new Agent(withTelemetry({ model, tools }, { tracer }))
 */
export function withTelemetry<Options extends AgentLoopConfig>(options: Options, telemetry: TelemetryOptions = {}): Options {
  const tracer = telemetry.tracer ?? trace.getTracer("rxagent");
  const settings: SpanSettings = {
    recordContent: telemetry.recordContent ?? false,
    secrets: telemetry.secrets ?? [],
    ...(telemetry.conversationId !== undefined ? { conversationId: telemetry.conversationId } : {}),
  };
  const runSpans = new RunSpans();
  const tracedRun = traceRun(tracer, settings, runSpans, telemetry.agentName);
  const { observeModel, observeToolCall } = options;
  return {
    ...options,
    observeModel: (model) => tracedModel(observeModel ? observeModel(model) : model, tracer, settings, runSpans),
    observeToolCall: (toolCall, execute) => tracedToolCall(runSpans, toolCall, observeToolCall ? () => observeToolCall(toolCall, execute) : execute),
    // The run span outermost, so it is the active context when the inner operator subscribes.
    observeRun: options.observeRun ? pipe(options.observeRun, tracedRun) : tracedRun,
  };
}
