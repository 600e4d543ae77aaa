import { context, trace } from "@opentelemetry/api";
import { isObservable, Observable } from "rxjs";
import type { AgentTool, ToolExecutionContext } from "../types/tools.js";
import type { RunSpans } from "./run-spans.js";

/**
 * The tools, each call running with its `execute_tool` span as the active context, so spans the
 * tool opens (or `trace.getActiveSpan()`) nest under it. The span itself comes from the run's
 * `tool_execution_start` (see `traceRun`); a call without one runs as it would.
 */
export function tracedTools(tools: readonly AgentTool[], spans: RunSpans): AgentTool[] {
  return tools.map((tool) => ({
    ...tool,
    execute(toolCallId: string, args: never, executionContext: ToolExecutionContext<unknown>) {
      const span = spans.open.get(toolCallId);
      if (span === undefined) return tool.execute(toolCallId, args, executionContext);
      const active = trace.setSpan(context.active(), span);
      const result = context.with(active, () => tool.execute(toolCallId, args, executionContext));
      // A cold Observable does its work when subscribed, later: subscribe it in the span too.
      return isObservable(result) ? new Observable<unknown>((subscriber) => context.with(active, () => result.subscribe(subscriber))) : result;
    },
  })) as AgentTool[];
}
