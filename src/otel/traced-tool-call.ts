import { context, trace } from "@opentelemetry/api";
import { isObservable, Observable } from "rxjs";
import type { ToolCall } from "../types/messages.js";
import type { ToolExecuteResult } from "../types/tools.js";
import type { RunSpans } from "./run-spans.js";

/**
 * Runs a tool call's `execute` with its `execute_tool` span as the active context, so spans the
 * tool opens (or `trace.getActiveSpan()`) nest under it: the loop's `observeToolCall`, so every
 * tool is covered, wherever the run got it. The span itself comes from the run's
 * `tool_execution_start` (see `traceRun`); a call without one runs as it would.
 */
export function tracedToolCall(spans: RunSpans, toolCall: ToolCall, execute: () => ToolExecuteResult): ToolExecuteResult {
  const span = spans.open.get(toolCall.id);
  if (span === undefined) return execute();
  const active = trace.setSpan(context.active(), span);
  const result = context.with(active, execute);
  // A cold Observable does its work when subscribed, later: subscribe it in the span too.
  return isObservable(result) ? new Observable((subscriber) => context.with(active, () => result.subscribe(subscriber))) : result;
}
