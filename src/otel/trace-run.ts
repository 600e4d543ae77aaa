import type { Span, Tracer } from "@opentelemetry/api";
import { context, SpanKind, trace } from "@opentelemetry/api";
import type { MonoTypeOperatorFunction } from "rxjs";
import { Observable } from "rxjs";
import { cancelReasonOf } from "../operators/tool-calls/call-cancellations.js";
import type { AgentEvent } from "../types/events.js";
import type { AgentToolResult } from "../types/tools.js";
import { runUsage } from "../model/run-usage.js";
import { isAssistantMessage } from "../types/messages.js";
import { queuedFrom } from "../streams/queued-from.js";
import type { SpanSettings } from "./attributes.js";
import { contentAttribute, failSpan, usageAttributes } from "./attributes.js";
import type { RunSpans } from "./run-spans.js";
import { errorText } from "../util/error-text.js";

/**
 * The run as an `invoke_agent` span, subscribed with it as the active context (so the model's
 * `chat` spans are its children), and an `execute_tool {tool}` span per tool call from its
 * `tool_execution_start` to its `tool_execution_end`. Approvals, slot waits and a cancel are
 * events on the tool's span; steering and follow-up messages events on the run's.
 *
 * Contract: `agent_end` ends the run span with the run's summed usage and cost; a failed or
 * aborted run sets status ERROR and `error.type`. An unsubscribe ends every span still open
 * with `error.type` `"cancelled"`, so nothing stays open.
 */
export function traceRun(tracer: Tracer, settings: SpanSettings, runSpans: RunSpans, agentName: string | undefined): MonoTypeOperatorFunction<AgentEvent> {
  return (source) =>
    new Observable<AgentEvent>((subscriber) => {
      const parent = context.active();
      const runSpan = tracer.startSpan(
        agentName === undefined ? "invoke_agent" : `invoke_agent ${agentName}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            "gen_ai.operation.name": "invoke_agent",
            ...(agentName !== undefined ? { "gen_ai.agent.name": agentName } : {}),
            ...(settings.conversationId !== undefined ? { "gen_ai.conversation.id": settings.conversationId } : {}),
          },
        },
        parent,
      );
      const runContext = trace.setSpan(parent, runSpan);
      const openTools = new Map<string, Span>();
      let turns = 0;
      let ended = false;

      const observe = (event: AgentEvent): void => {
        switch (event.type) {
          case "turn_start":
            turns += 1;
            return;
          case "message_start": {
            const queue = queuedFrom(event.message);
            if (queue !== undefined) runSpan.addEvent(queue === "steering" ? "rxagent.steering" : "rxagent.follow_up", { "rxagent.turn": turns });
            return;
          }
          case "tool_execution_start": {
            const span = tracer.startSpan(
              `execute_tool ${event.toolName}`,
              {
                kind: SpanKind.INTERNAL,
                attributes: {
                  "gen_ai.operation.name": "execute_tool",
                  "gen_ai.tool.name": event.toolName,
                  "gen_ai.tool.call.id": event.toolCallId,
                  ...(settings.conversationId !== undefined ? { "gen_ai.conversation.id": settings.conversationId } : {}),
                  ...contentAttribute(settings, "gen_ai.tool.call.arguments", event.args),
                },
              },
              runContext,
            );
            openTools.set(event.toolCallId, span);
            runSpans.add(event.toolCallId, span, runContext);
            return;
          }
          case "tool_approval_start":
          case "tool_slot_wait_start":
          case "tool_slot_wait_end":
            openTools.get(event.toolCallId)?.addEvent(`rxagent.${event.type}`);
            return;
          case "tool_approval_end":
            openTools.get(event.toolCallId)?.addEvent("rxagent.tool_approval_end", { "rxagent.approved": event.approved, ...(event.reason !== undefined ? { "rxagent.reason": event.reason } : {}) });
            return;
          case "tool_execution_end": {
            const span = openTools.get(event.toolCallId);
            if (span === undefined) return;
            span.setAttributes(contentAttribute(settings, "gen_ai.tool.call.result", event.result.content));
            if (event.isError) endFailedTool(span, event.result.content);
            span.end();
            openTools.delete(event.toolCallId);
            runSpans.open.delete(event.toolCallId);
            return;
          }
          case "agent_end": {
            // Events from a loop of this version carry it; others (an older server's) are summed here.
            const usage = event.usage ?? runUsage(event.messages);
            runSpan.setAttributes({ ...usageAttributes(usage), "rxagent.usage.cost": usage.cost.total, "rxagent.turns": turns, ...(event.reason !== undefined ? { "rxagent.end_reason": event.reason } : {}) });
            const failure = event.messages.filter(isAssistantMessage).at(-1)?.errorMessage ?? event.errorMessage;
            if (event.reason === "failed" || event.reason === "aborted") failSpan(runSpan, event.reason, failure);
            ended = true;
            runSpan.end();
            return;
          }
          default:
            return;
        }
      };

      const subscription = context.with(runContext, () =>
        source.subscribe({
          next: (event) => {
            observe(event);
            subscriber.next(event);
          },
          error: (error: unknown) => {
            if (!ended) {
              ended = true;
              failSpan(runSpan, "run_error", errorText(error));
              runSpan.end();
            }
            subscriber.error(error);
          },
          complete: () => subscriber.complete(),
        }),
      );
      return () => {
        subscription.unsubscribe();
        for (const [toolCallId, span] of openTools) {
          failSpan(span, "cancelled");
          span.end();
          runSpans.open.delete(toolCallId);
        }
        openTools.clear();
        if (ended) return;
        ended = true;
        failSpan(runSpan, "cancelled");
        runSpan.end();
      };
    });
}

/** A failed call's span: a cancel (`cancellations`, `Agent.cancelToolCall`) is an event and `error.type` "cancelled", any other failure "tool_error". */
function endFailedTool(span: Span, content: readonly AgentToolResult["content"][number][]): void {
  const [first] = content;
  const reason = content.length === 1 && first?.type === "text" ? cancelReasonOf(first.text) : undefined;
  if (reason === undefined) {
    failSpan(span, "tool_error");
    return;
  }
  span.addEvent("rxagent.tool_cancelled", reason === "" ? {} : { "rxagent.reason": reason });
  failSpan(span, "cancelled");
}
