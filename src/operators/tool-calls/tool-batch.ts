import { Observable, type SchedulerLike } from "rxjs";
import type {
  AgentContext,
  AgentLoopConfig,
  AgentTool,
  AgentToolResult,
  AssistantMessage,
  ToolCall,
  ToolResultMessage,
} from "../../types.js";
import type { Cancellation } from "../../util/lazy-abort-controller.js";
import type { CallCancellations } from "./call-cancellations.js";
import type { CallSignalGroup } from "./call-signal-group.js";
import type { ToolDeadlinesOwner } from "./tool-deadlines.js";

/** What every step of one assistant message's tool batch needs to know. */
export interface ToolBatch {
  /**
   * The message the calls come from; while it streams (eager execution), the message as of the
   * latest call's `toolcall_end`, then the final message.
   */
  assistantMessage: AssistantMessage;
  readonly context: AgentContext;
  readonly config: AgentLoopConfig;
  readonly scheduler: SchedulerLike;
  /** The run's abort, checked before each call; its signal is handed to hooks. */
  readonly cancellation: Cancellation;
  /**
   * Why the batch stops early, once it does: an abort, or steering that interrupts tools. Calls
   * running then are aborted; calls not started yet are skipped.
   */
  readonly interruption: BatchInterruption;
  /** Keeps the running calls' time limits (`toolTimeoutMs`): the run, whose batches share one timer. */
  readonly deadlinesOwner: ToolDeadlinesOwner;
  /** Cancels of single calls, when the config has a `cancellations` source. */
  readonly cancellations?: CallCancellations;
  /** The latest group of calls sharing one signal, which calls starting alike join (call-signal-group.ts). */
  signalGroup?: CallSignalGroup;
}

/**
 * The batch's early stop, readable synchronously and as an Observable.
 *
 * Why not only a ReplaySubject: every call asks "interrupted yet?" and running calls wait for
 * it; a subscription to a ReplaySubject held about 1.1 KB of heap (20,000 of them, heap after a
 * full GC, Node 20, 2026-12-01). Why a list through the listeners themselves and not a Set: a
 * Set grew and shrank its table as each batch's calls came and left, an allocation or two per
 * call (bench W2 with Promise tools, bench/README.md "A tool call's cost, warm").
 */
export class BatchInterruption {
  private currentReason: string | undefined;
  /** What the running calls' signals fire with: the run's abort reason, else an Error of the reason. */
  private currentCause: unknown;
  /** The listeners in the order they came. */
  private first: InterruptionListener | undefined;
  private last: InterruptionListener | undefined;

  /** The reason, once interrupted. */
  get reason(): string | undefined {
    return this.currentReason;
  }

  /** Emits the reason once (at once if already interrupted), then completes. */
  get reason$(): Observable<string> {
    return new Observable<string>((subscriber) => {
      const listener: InterruptionListener = {
        interrupted: (reason) => {
          subscriber.next(reason);
          subscriber.complete();
        },
      };
      this.listen(listener);
      return () => this.stopListening(listener);
    });
  }

  /** The reason the running calls' signals fire with (`signal.reason`), once interrupted. */
  get cause(): unknown {
    return this.currentCause;
  }

  /**
   * Interrupts the batch once: `reason` is the calls' result text; `cause`, when given (the
   * run's abort reason, as `agent.abort({ reason })` set it), is what their signals fire with,
   * as in the reference, where tools get the run's own signal.
   */
  interrupt(reason: string, cause: unknown = new Error(reason)): void {
    if (this.currentReason !== undefined) return;
    this.currentReason = reason;
    this.currentCause = cause;
    // Every listener listening now is told, in the order they came, even one that a listener
    // told before it stops: it was listening when the interruption came.
    const listeners: InterruptionListener[] = [];
    while (this.first !== undefined) {
      listeners.push(this.first);
      this.stopListening(this.first);
    }
    for (const listener of listeners) listener.interrupted(reason);
  }

  /**
   * Tells `listener` of the interruption (at once if it happened) until `stopListening`. Why an
   * object with a method: every running call listens, and it needs no closure to register nor
   * one to unregister.
   */
  listen(listener: InterruptionListener): void {
    if (this.currentReason !== undefined) {
      listener.interrupted(this.currentReason);
      return;
    }
    this.stopListening(listener);
    listener.interruptionListenedTo = this;
    listener.previousListener = this.last;
    listener.nextListener = undefined;
    if (this.last === undefined) this.first = listener;
    else this.last.nextListener = listener;
    this.last = listener;
  }

  stopListening(listener: InterruptionListener): void {
    if (listener.interruptionListenedTo !== this) return;
    const { previousListener, nextListener } = listener;
    if (previousListener === undefined) this.first = nextListener;
    else previousListener.nextListener = nextListener;
    if (nextListener === undefined) this.last = previousListener;
    else nextListener.previousListener = previousListener;
    listener.interruptionListenedTo = undefined;
    listener.previousListener = undefined;
    listener.nextListener = undefined;
  }
}

/**
 * Whatever wants to hear of a batch's interruption. The other fields are `BatchInterruption`'s
 * own: its list of listeners runs through them, so listening allocates nothing.
 */
export interface InterruptionListener {
  interrupted(reason: string): void;
  /** The `BatchInterruption` listened to, while it is. */
  interruptionListenedTo?: BatchInterruption | undefined;
  previousListener?: InterruptionListener | undefined;
  nextListener?: InterruptionListener | undefined;
}

/**
 * Calls that join a running batch (eager execution): the message as it stands, and the calls it
 * adds, in source order.
 */
export interface ToolCallArrival {
  readonly message: AssistantMessage;
  readonly toolCalls: readonly ToolCall[];
}

/** A call that passed preparation and may run. */
export class PreparedToolCall {
  constructor(
    readonly index: number,
    readonly toolCall: ToolCall,
    readonly tool: AgentTool,
    readonly args: unknown,
  ) {}
}

/** A call with its final result; `interrupted` marks abort, steering skips and cancels (no `afterToolCall`). */
export class FinalizedToolCall {
  constructor(
    readonly index: number,
    readonly toolCall: ToolCall,
    readonly result: AgentToolResult,
    readonly isError: boolean,
    readonly interrupted = false,
  ) {}
}

/**
 * The last value of a batch: its result messages in call order, whether to stop, and why the
 * batch's own machinery failed (a steering queue of the caller's threw), if it did.
 */
export class ToolBatchSummary {
  constructor(
    readonly results: ToolResultMessage[],
    readonly terminate: boolean,
    readonly failure?: string,
  ) {}
}

export const ABORTED_TOOL_TEXT = "Tool execution was aborted.";
export const STEERING_SKIP_TEXT = "Skipped due to queued user message.";
