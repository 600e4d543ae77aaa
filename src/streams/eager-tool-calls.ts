import {
  connectable,
  defer,
  EMPTY,
  filter,
  finalize,
  ignoreElements,
  map,
  merge,
  type Observable,
  ReplaySubject,
  scan,
  startWith,
  Subject,
  type Subscription,
  take,
  tap,
  type Unsubscribable,
} from "rxjs";
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
export class EagerToolCalls implements Unsubscribable {
  /** The calls started early, in source order. */
  private readonly started: ToolCall[] = [];
  private readonly arrivals = new Subject<ToolCallArrival>();
  /**
   * The batch, connected at the first early call. Its replay holds what the batch emitted before
   * the message ended and hands it to `batchFor`'s subscriber; it keeps the batch's outputs until
   * the turn drops this object, which the batch's subscriber receives anyway.
   */
  private batch: { outputs: Observable<BatchOutput>; connection: Subscription } | undefined;
  /** Whether a call may still start early: not after one that may not, nor once torn down. */
  private accepting = true;

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
    if (!this.accepting) return;
    if (!this.mayStartEarly(toolCall)) {
      this.accepting = false;
      return;
    }
    this.started.push(toolCall);
    if (this.batch === undefined) {
      const outputs = connectable(executeToolCalls(message, [], this.run, this.arrivals), { connector: () => new ReplaySubject<BatchOutput>() });
      this.batch = { outputs, connection: outputs.connect() };
    }
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
    const { outputs } = this.batch;
    const rest = toolCalls.slice(this.started.length);
    // Subscribed after `outputs` (so after what it held is replayed, and, for each later output,
    // after the subscriber has it): the calls that did not start early join the batch.
    const join$ = defer(() => {
      if (!rest.some((call) => this.toolOf(call)?.executionMode === "sequential")) {
        this.arrivals.next({ message, toolCalls: rest });
        this.arrivals.complete();
        return EMPTY;
      }
      // A sequential remainder: each call joins once every call before it has its result
      // (`message_end` of its tool result); the arrivals end with the last one's result.
      this.arrivals.next({ message, toolCalls: [] });
      return outputs.pipe(
        filter((output) => !(output instanceof ToolBatchSummary) && output.type === "message_end"),
        scan((results) => results + 1, 0),
        startWith(0),
        map((results) => results - this.started.length),
        filter((joined) => joined >= 0),
        take(rest.length + 1),
        tap((joined) => (joined < rest.length ? this.arrivals.next({ message, toolCalls: [rest[joined]!] }) : this.arrivals.complete())),
        ignoreElements(),
      );
    });
    // Whenever the subscriber is done with the batch (its end, its error, or leaving), so is the turn.
    return merge(outputs, join$).pipe(finalize(() => this.unsubscribe()));
  }

  /** Tears the batch down: running calls hear their signal; nothing it held is handed on. */
  unsubscribe(): void {
    this.accepting = false;
    this.batch?.connection.unsubscribe();
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
