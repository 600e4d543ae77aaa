import { concatMap, from, mergeMap, Observable, type Subscriber } from "rxjs";
import type { ToolCall, ToolResultMessage } from "../../src/index.js";
import type { BenchToolArguments } from "../workloads/replies.js";
import { type AgentSink, floorRunWith } from "./floor.js";
import type { BenchToolResult, Implementation, Scenario, ToolBodyContext } from "./implementation.js";

/**
 * The floor's loop with its tool calls run in the shape the design card requires of rxagent, and
 * nothing else: each call an Observable that `mergeMap` fans out, each result a slot that
 * `concatMap` reads back in call order. No validation, hooks, signal, timeout, bounds or events
 * of its own: the least a loop of that shape pays per call, to set rxagent's distance to the floor
 * against (bench W2, "the design's shape alone").
 *
 * Named `rxagent` so that it fills that column of its own rows (the report's columns are fixed);
 * those rows say what stands there. Unbounded calls only (W2).
 */
export const designShape: Implementation = {
  name: "rxagent",
  supportsConcurrencyLimit: false,
  run(scenario, onEvent) {
    if (scenario.maxConcurrency !== undefined) throw new Error("design shape: unbounded calls only");
    return floorRunWith(shapedTools, scenario, onEvent as AgentSink);
  },
  idleAgent() {
    throw new Error("design shape: W2 only");
  },
  agentSession() {
    throw new Error("design shape: W2 only");
  },
};

/** A run without a signal shares one that never fires, as the floor does. */
const toolContext: ToolBodyContext = { signal: new AbortController().signal };

/** One call's result, filled once it is done; read in call order (one subscriber, as `concatMap`'s). */
class ResultSlot extends Observable<ToolResultMessage> {
  private message: ToolResultMessage | undefined;
  private waiting: Subscriber<ToolResultMessage> | undefined;

  constructor() {
    super(ResultSlot.serve);
  }

  fill(message: ToolResultMessage): void {
    this.message = message;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) deliver(waiting, message);
  }

  private static serve(this: Observable<ToolResultMessage>, subscriber: Subscriber<ToolResultMessage>): void {
    const slot = this as ResultSlot;
    if (slot.message) deliver(subscriber, slot.message);
    else slot.waiting = subscriber;
  }
}

function deliver(subscriber: Subscriber<ToolResultMessage>, message: ToolResultMessage): void {
  subscriber.next(message);
  subscriber.complete();
}

/** One call: runs the tool on subscribe and emits its index and result once it has one. */
class ToolRun extends Observable<readonly [number, BenchToolResult]> {
  constructor(
    readonly scenario: Scenario,
    readonly toolCall: ToolCall,
    readonly index: number,
  ) {
    super(ToolRun.execute);
  }

  private static execute(this: Observable<readonly [number, BenchToolResult]>, subscriber: Subscriber<readonly [number, BenchToolResult]>): void {
    const run = this as ToolRun;
    const output = run.scenario.tool(run.toolCall.arguments as BenchToolArguments, toolContext);
    if (output instanceof Promise) {
      output.then((result) => {
        subscriber.next([run.index, result]);
        subscriber.complete();
      });
    } else {
      subscriber.next([run.index, output]);
      subscriber.complete();
    }
  }
}

const inCallOrder = concatMap((slot: ResultSlot) => slot);

/** Runs a reply's calls through `mergeMap` and reads the results back through `concatMap`; synchronous when every body is. */
function shapedTools(scenario: Scenario, toolCalls: ToolCall[], onEvent: AgentSink): ToolResultMessage[] | Promise<ToolResultMessage[]> {
  const results: ToolResultMessage[] = [];
  const slots = toolCalls.map(() => new ResultSlot());
  let running = 2;
  let finished: (() => void) | undefined;
  const completeOne = () => {
    running -= 1;
    if (running === 0) finished?.();
  };
  from(slots)
    .pipe(inCallOrder)
    .subscribe({ next: (message) => results.push(message), complete: completeOne });
  from(toolCalls)
    .pipe(
      mergeMap((toolCall, index) => {
        onEvent({ type: "tool_execution_start", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments });
        return new ToolRun(scenario, toolCall, index);
      }),
    )
    .subscribe({
      next: ([index, result]) => {
        const toolCall = toolCalls[index]!;
        onEvent({ type: "tool_execution_end", toolCallId: toolCall.id, toolName: toolCall.name, result, isError: false });
        slots[index]!.fill({ role: "toolResult", toolCallId: toolCall.id, toolName: toolCall.name, content: result.content, details: result.details, isError: false, timestamp: 0 });
      },
      complete: completeOne,
    });
  if (running === 0) return results;
  return new Promise<void>((resolve) => (finished = resolve)).then(() => results);
}
