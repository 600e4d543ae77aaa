import { concat, concatMap, from, type Observable, type SchedulerLike } from "rxjs";
import type { AgentEvent, ToolResultMessage } from "../../types.js";
import { ResultSlot } from "./result-slot.js";
import { FinalizedToolCall, ToolBatchSummary } from "./tool-batch.js";
import { toolResultMessage } from "./tool-result-message.js";

// One operator for every batch (it holds no state until subscribed): a closure and an operator fewer per batch.
const inSlotOrder = concatMap((slot: ResultSlot) => slot);

/** What running a batch's calls emits: their events, and each call once finalized. */
export type CallOutput = AgentEvent | FinalizedToolCall;

/**
 * One batch's results: a slot per call, filled as each call is finalized, and read back in call
 * order (`inOrder`); the result messages and whether every call asked to stop, for the summary.
 */
export class BatchResults {
  /** How many calls have started (`tool_execution_start`): only those may be settled by a cancel. */
  startedCalls = 0;
  private readonly slots: ResultSlot[];
  private readonly messages: ToolResultMessage[] = [];
  private readonly terminates: boolean[] = [];

  constructor(
    calls: number,
    private readonly scheduler: SchedulerLike,
  ) {
    // A loop, not `Array.from` with a function: that was 1.9% of bench W2's samples (profile.ts W2).
    this.slots = [];
    for (let index = 0; index < calls; index++) this.slots.push(new ResultSlot());
  }

  /** A slot for a call that joined the batch (eager execution). */
  addSlot(): ResultSlot {
    const slot = new ResultSlot();
    this.slots.push(slot);
    return slot;
  }

  /** Whether the call has its result already (settled by a cancel while it waited, say). */
  isSettled(index: number): boolean {
    return this.messages[index] !== undefined;
  }

  /**
   * Emits a finalized call's `tool_execution_end` to `destination`, then fills its slot (so its
   * result follows its end). A call settled before (a cancel while it waited) is left as it was:
   * what its preparation or run says later is moot.
   */
  settle(finalized: FinalizedToolCall, destination: { next(event: AgentEvent): void }): void {
    const { index, toolCall, result, isError } = finalized;
    if (this.messages[index] !== undefined) return;
    destination.next({ type: "tool_execution_end", toolCallId: toolCall.id, toolName: toolCall.name, result, isError });
    this.terminates[index] = result.terminate === true;
    const message = toolResultMessage(finalized, this.scheduler.now());
    this.messages[index] = message;
    this.slots[index]!.fill(message);
  }

  /**
   * Takes what running the calls emitted: passes events on to `destination`, counting starts, and
   * settles each finalized call (`settle`).
   */
  take(output: CallOutput, destination: { next(event: AgentEvent): void }): void {
    if (output instanceof FinalizedToolCall) {
      this.settle(output, destination);
      return;
    }
    if (output.type === "tool_execution_start") this.startedCalls += 1;
    destination.next(output);
  }

  /** The result messages in call order, each as soon as it and every call before it is settled (`concatMap` over the slots). */
  inOrder(arrivedSlots?: Observable<ResultSlot>): Observable<AgentEvent> {
    const slots$ = arrivedSlots ? concat(from(this.slots), arrivedSlots) : from(this.slots);
    return slots$.pipe(inSlotOrder);
  }

  /** The batch's last value; `failure`: why its machinery failed, if it did. */
  summary(failure: string | undefined): ToolBatchSummary {
    const { terminates } = this;
    return new ToolBatchSummary(this.messages, terminates.length > 0 && terminates.every(Boolean), failure);
  }
}
