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
 * it; a running call's listener in a Set holds about 65 bytes of heap, a subscription to a
 * ReplaySubject about 1.1 KB (20,000 of each, heap after a full GC, Node 20, 2026-12-01).
 */
export class BatchInterruption {
  private currentReason: string | undefined;
  /** What the running calls' signals fire with: the run's abort reason, else an Error of the reason. */
  private currentCause: unknown;
  // Made by the first listener: a batch of calls that answer synchronously never has one (bench W2, W5).
  private listeners: Set<InterruptionListener> | undefined;

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
    if (this.listeners === undefined) return;
    for (const listener of [...this.listeners]) listener.interrupted(reason);
    this.listeners.clear();
  }

  /**
   * Tells `listener` of the interruption (at once if it happened) until `stopListening`. Why an
   * object with a method: every running call listens, and it needs no closure to register nor
   * one to unregister.
   */
  listen(listener: InterruptionListener): void {
    if (this.currentReason !== undefined) listener.interrupted(this.currentReason);
    else (this.listeners ??= new Set()).add(listener);
  }

  stopListening(listener: InterruptionListener): void {
    this.listeners?.delete(listener);
  }
}

/** Whatever wants to hear of a batch's interruption. */
export interface InterruptionListener {
  interrupted(reason: string): void;
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
