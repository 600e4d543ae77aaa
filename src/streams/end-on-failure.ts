import { Subscriber } from "rxjs";
import { reserveFinalizerSlots } from "../operators/finalizer-slot.js";
import { errorText } from "../errors.js";
import { errorResult } from "../tools/tool-results.js";
import { emptyAssistantMessage, isFailedMessage, toolCallsOf } from "../types/messages.js";
import type { AgentEvent, AssistantMessage, ToolResultMessage } from "../types.js";
import { agentEndEvent } from "./next-step.js";
import { appendMessage, messageEventsOf, type RunState } from "./run-state.js";

/**
 * The observer between a run's turns and its subscriber that makes a failure of the loop itself
 * (a bug, a value no check foresaw) end the run as data: every started call gets its
 * `tool_execution_end`, every call of the open turn a `toolResult` message, the turn its
 * `turn_end`, and the run `agent_end` with `reason: "failed"` and an `errorMessage` naming the
 * cause; then it completes. Why: an error instead left clients showing a live run forever and the
 * transcript holding a call without a result (issue 27, row 2).
 *
 * Why a class that watches every event: it must know, when the failure comes, which turn is open
 * and which calls started; a `catchError` would know neither. It costs one switch per event. Why a
 * `Subscriber` of the run's subscriber: rxjs then links the two, so an unsubscribe of the run
 * reaches the turns, as when the turns were subscribed with the run's subscriber itself.
 */
export class EndOnFailure extends Subscriber<AgentEvent> {
  private inTurn = false;
  private assistant: AssistantMessage | undefined;
  /**
   * The calls' `tool_execution_start` and `_end` events, in order, since the last moment no call
   * was open; replayed on failure to find the calls still running. Why a log and not a Map of the
   * running calls by id: a Map's `set` and `delete` per call were 78 ns (8 calls per turn, Node 20),
   * about 4% of a tool call in bench W2; a push is a few.
   */
  private toolEvents: ToolExecutionEvent[] | undefined;
  /** Starts minus ends in `toolEvents`: at 0 every call has ended (an end always follows its own start), so the log is dropped. */
  private openCalls = 0;
  /** The `toolResult` messages of the open turn; made by the first (a turn without tools makes none). */
  private results: ToolResultMessage[] | undefined;
  private agentEnded = false;

  constructor(
    private readonly run: RunState,
    private readonly subscriber: Subscriber<AgentEvent>,
  ) {
    super(subscriber);
    // The turns' subscription is the one finalizer (see reserveFinalizerSlots).
    reserveFinalizerSlots(this, 1);
  }

  protected override _next(event: AgentEvent): void {
    switch (event.type) {
      case "turn_start":
        this.inTurn = true;
        this.assistant = undefined;
        this.results = undefined;
        break;
      case "turn_end":
        this.inTurn = false;
        break;
      case "message_end":
        if (event.message.role === "assistant") this.assistant = event.message as AssistantMessage;
        else if (event.message.role === "toolResult") (this.results ??= []).push(event.message as ToolResultMessage);
        break;
      case "tool_execution_start":
        (this.toolEvents ??= []).push(event);
        this.openCalls += 1;
        break;
      case "tool_execution_end":
        (this.toolEvents ??= []).push(event);
        this.openCalls -= 1;
        if (this.openCalls === 0) this.toolEvents = undefined;
        break;
      case "agent_end":
        this.agentEnded = true;
        break;
    }
    this.subscriber.next(event);
  }

  protected override _error(error: unknown): void {
    try {
      if (this.agentEnded || this.subscriber.closed) this.subscriber.complete();
      else this.endAsFailed(`The run failed: ${errorText(error)}`);
    } catch {
      // Nothing more can be said as data; the subscriber hears the first failure.
      this.subscriber.error(error);
    } finally {
      this.unsubscribe();
    }
  }

  private endAsFailed(text: string): void {
    const { run, subscriber } = this;
    const now = run.scheduler.now();
    for (const [toolCallId, toolName] of runningCalls(this.toolEvents ?? [])) {
      subscriber.next({ type: "tool_execution_end", toolCallId, toolName, result: errorResult(text), isError: true });
    }
    if (this.inTurn) {
      let assistant = this.assistant;
      if (assistant === undefined) {
        assistant = { ...emptyAssistantMessage(run.config.model, now), errorMessage: text };
        appendMessage(run, assistant);
        for (const event of messageEventsOf(assistant)) subscriber.next(event);
      }
      const results = (this.results ??= []);
      const answered = new Set(results.map((result) => result.toolCallId));
      const calls = isFailedMessage(assistant) ? [] : toolCallsOf(assistant);
      for (const call of calls) {
        if (answered.has(call.id)) continue;
        const result: ToolResultMessage = { role: "toolResult", toolCallId: call.id, toolName: call.name, content: errorResult(text).content, details: {}, isError: true, timestamp: now };
        appendMessage(run, result);
        results.push(result);
        for (const event of messageEventsOf(result)) subscriber.next(event);
      }
      subscriber.next({ type: "turn_end", message: assistant, toolResults: results });
    }
    run.ended = true;
    subscriber.next(agentEndEvent(run, { type: "end", reason: "failed", errorMessage: text }));
    subscriber.complete();
  }
}

type ToolExecutionEvent = Extract<AgentEvent, { type: "tool_execution_start" | "tool_execution_end" }>;

/** The calls started and not ended in `events`, name by id, in start order. */
function runningCalls(events: readonly ToolExecutionEvent[]): Map<string, string> {
  const running = new Map<string, string>();
  for (const event of events) {
    if (event.type === "tool_execution_start") running.set(event.toolCallId, event.toolName);
    else running.delete(event.toolCallId);
  }
  return running;
}
