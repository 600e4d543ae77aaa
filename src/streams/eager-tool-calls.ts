import { Observable, type Observer, Subject, type Subscriber, type Subscription, type Unsubscribable } from "rxjs";
import { executeToolCalls } from "../operators/tool-calls/execute-tool-calls.js";
import { ToolBatchSummary, type ToolCallArrival } from "../operators/tool-calls/tool-batch.js";
import type { AgentEvent, AgentTool, AssistantMessage, ToolCall } from "../types.js";
import type { RunState } from "./run-state.js";

type BatchOutput = AgentEvent | ToolBatchSummary;

/**
 * One turn's tool batch started while its assistant message still streams (eager execution).
 *
 * `arrive` is told of each call's `toolcall_end`. A call starts early when its tool is eager
 * (`eager`, or `eagerTools` unless the tool says `eager: false`), is neither sequential nor in
 * need of approval, repeats no earlier call's id, and every call before it in the message started
 * early too: preparation and `beforeToolCall` stay in source order. The first such call
 * subscribes the batch (`executeToolCalls` with arrivals); the rest join it, so `maxConcurrency`
 * and tool `concurrency` count early and late calls together.
 *
 * The batch's events are held until the message has ended, so a UI still hears
 * `message_end` before any `tool_execution_*`. Then `batchFor` hands them on and adds the calls
 * that did not start early; `unsubscribe` (a failed, aborted or length-cut message) tears the
 * batch down, which fires the signals of the calls still running, and drops what it held.
 *
 *     model:   ─toolcall_end(a)──toolcall_end(b)────done─▶
 *     a:        ├─runs──────────────────────────────────────┤
 *     b:                         ├─runs─┤
 *     events:                                      message_end, start(a), start(b), end(b), …
 */
export class EagerToolCalls implements Observer<BatchOutput>, Unsubscribable {
  /** The calls started early, in source order. */
  private readonly started: ToolCall[] = [];
  private readonly arrivals = new Subject<ToolCallArrival>();
  private batch: Subscription | undefined;
  /** A call that may not start early came: none after it does either. */
  private held = false;
  private closed = false;
  /** What the batch emitted before the message ended; undefined once handed on. */
  private waiting: BatchOutput[] | undefined = [];
  private failure: { error: unknown } | undefined;
  private destination: Subscriber<BatchOutput> | undefined;
  /** A sequential remainder: the calls still to add one at a time, each when the ones before are done. */
  private remainder: ToolCall[] | undefined;
  private finalMessage: AssistantMessage | undefined;
  private added = 0;
  private resultsOut = 0;

  private constructor(private readonly run: RunState) {}

  /** One for a turn whose run may start calls early; undefined (nothing to pay) otherwise. */
  static forTurn(run: RunState): EagerToolCalls | undefined {
    const { config, context } = run;
    if (config.toolExecution === "sequential") return undefined;
    const eagerTools = config.eagerTools === true;
    const anyEager = context.tools?.some((tool) => tool.eager ?? eagerTools) ?? false;
    return anyEager ? new EagerToolCalls(run) : undefined;
  }

  /** A call's arguments are complete (`toolcall_end`) in `message`, the message so far. */
  arrive(toolCall: ToolCall, message: AssistantMessage): void {
    if (this.held || this.closed) return;
    if (!this.mayStartEarly(toolCall)) {
      this.held = true;
      return;
    }
    this.started.push(toolCall);
    this.added += 1;
    this.batch ??= executeToolCalls(message, [], this.run, this.arrivals).subscribe(this);
    this.arrivals.next({ message, toolCalls: [toolCall] });
  }

  /**
   * The turn's batch, from its start: what it held, then what follows, the calls that did not
   * start early joining it. Undefined when nothing started early, or when the final calls do not
   * begin with the ones that started (a provider whose `toolcall_end` disagrees with its final
   * message): those are cancelled, and the turn runs the final calls as without eager execution.
   */
  batchFor(message: AssistantMessage, toolCalls: readonly ToolCall[]): Observable<BatchOutput> | undefined {
    if (this.batch === undefined) return undefined;
    if (!this.startedFirst(toolCalls)) {
      this.unsubscribe();
      return undefined;
    }
    return new Observable<BatchOutput>((subscriber) => {
      this.destination = subscriber;
      const waiting = this.waiting ?? [];
      this.waiting = undefined;
      for (const output of waiting) {
        if (subscriber.closed) return this;
        subscriber.next(output);
      }
      if (this.failure) {
        subscriber.error(this.failure.error);
        return this;
      }
      const rest = toolCalls.slice(this.started.length);
      if (rest.some((call) => this.toolOf(call)?.executionMode === "sequential")) {
        this.remainder = rest;
        this.finalMessage = message;
        this.arrivals.next({ message, toolCalls: [] });
        this.addNextSequential();
      } else {
        this.arrivals.next({ message, toolCalls: rest });
        this.arrivals.complete();
      }
      return this;
    });
  }

  next(output: BatchOutput): void {
    const isResult = !(output instanceof ToolBatchSummary) && output.type === "message_end";
    if (this.destination) this.destination.next(output);
    else this.waiting?.push(output);
    if (isResult) {
      this.resultsOut += 1;
      if (this.remainder) this.addNextSequential();
    }
  }

  error(error: unknown): void {
    if (this.destination) this.destination.error(error);
    else this.failure = { error };
  }

  complete(): void {
    this.destination?.complete();
  }

  /** Tears the batch down: running calls hear their signal; nothing it held is handed on. */
  unsubscribe(): void {
    this.closed = true;
    this.waiting = undefined;
    this.batch?.unsubscribe();
  }

  /** Adds the next call of a sequential remainder once every call added so far has its result. */
  private addNextSequential(): void {
    const remainder = this.remainder!;
    if (this.resultsOut < this.added) return;
    const next = remainder.shift();
    if (next === undefined) {
      this.remainder = undefined;
      this.arrivals.complete();
      return;
    }
    this.added += 1;
    this.arrivals.next({ message: this.finalMessage!, toolCalls: [next] });
  }

  private mayStartEarly(toolCall: ToolCall): boolean {
    // The event's call is not checked by the model layer as the final message is: a malformed one waits for it.
    if (typeof toolCall !== "object" || toolCall === null || typeof toolCall.id !== "string" || typeof toolCall.name !== "string") return false;
    // A repeated id is renamed when the message ends (`settledModelMessage`), to a name not known yet.
    if (this.started.some((call) => call.id === toolCall.id)) return false;
    const tool = this.toolOf(toolCall);
    if (!tool || !(tool.eager ?? this.run.config.eagerTools === true)) return false;
    return tool.executionMode !== "sequential" && !tool.needsApproval;
  }

  private toolOf(toolCall: ToolCall): AgentTool | undefined {
    return this.run.context.tools?.find((tool) => tool.name === toolCall.name);
  }

  private startedFirst(toolCalls: readonly ToolCall[]): boolean {
    return this.started.every((call, index) => {
      const final = toolCalls[index];
      return final !== undefined && final.id === call.id && final.name === call.name && sameArguments(final, call);
    });
  }
}

function sameArguments(left: ToolCall, right: ToolCall): boolean {
  if (left.arguments === right.arguments && left.rawArguments === right.rawArguments) return true;
  return JSON.stringify(left.arguments) === JSON.stringify(right.arguments) && left.rawArguments === right.rawArguments;
}
