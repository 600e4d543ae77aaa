import type { Subject } from "rxjs";
import type { AgentMessage, AgentState, QueuedMessages, QueueMode } from "../types.js";
import { MessageQueue } from "../streams/message-queue.js";
import { QueueInput } from "./queue-input.js";

/** What `Agent.continue` took from the queues, and whether it was steering. */
export interface QueuedForContinue {
  messages: AgentMessage[];
  steering: boolean;
}

/** The queue counts an `Agent` publishes in its state. */
export type QueueCounts = Partial<Pick<AgentState, "queuedSteering" | "queuedFollowUp">>;

/**
 * An `Agent`'s steering and follow-up queues and their ways in (`steer`, `followUp`, the
 * Subjects), each made on first use. Why on demand, and why the Agent makes this object itself
 * only when first steered: most agents never are, and the queues, their inputs and closures were a
 * fifth of an idle agent (bench W5, heap per idle agent).
 */
export class AgentQueues {
  private steeringQueueValue: MessageQueue | undefined;
  private followUpQueueValue: MessageQueue | undefined;
  private steeringInputValue: QueueInput | undefined;
  private followUpInputValue: QueueInput | undefined;
  private closed = false;

  /** @param onCount told each queue's new length, as a state patch. */
  constructor(private readonly onCount: (counts: QueueCounts) => void) {}

  /** The steering queue if it was made (a run drains through this without making it). */
  get existingSteering(): MessageQueue | undefined {
    return this.steeringQueueValue;
  }

  get existingFollowUp(): MessageQueue | undefined {
    return this.followUpQueueValue;
  }

  get steeringQueue(): MessageQueue {
    return (this.steeringQueueValue ??= new MessageQueue((queuedSteering) => this.onCount({ queuedSteering })));
  }

  get followUpQueue(): MessageQueue {
    return (this.followUpQueueValue ??= new MessageQueue((queuedFollowUp) => this.onCount({ queuedFollowUp })));
  }

  get steering$(): Subject<AgentMessage> {
    return this.steeringInput.subject$;
  }

  get followUps$(): Subject<AgentMessage> {
    return this.followUpInput.subject$;
  }

  steer(messages: readonly AgentMessage[]): void {
    for (const message of messages) this.steeringInput.push(message);
  }

  followUp(messages: readonly AgentMessage[]): void {
    for (const message of messages) this.followUpInput.push(message);
  }

  /** What `continue` runs after an assistant message: queued steering first, else follow-ups. */
  takeForContinue(steeringMode: QueueMode, followUpMode: QueueMode): QueuedForContinue {
    if ((this.steeringQueueValue?.size ?? 0) > 0) return { messages: this.steeringQueue.drain(steeringMode), steering: true };
    return { messages: this.followUpQueueValue?.drain(followUpMode) ?? [], steering: false };
  }

  clearSteering(): AgentMessage[] {
    return this.steeringQueueValue?.clear() ?? [];
  }

  clearFollowUps(): AgentMessage[] {
    return this.followUpQueueValue?.clear() ?? [];
  }

  /** Copies of what is queued. */
  peek(): QueuedMessages {
    return { steering: [...(this.steeringQueueValue?.peek() ?? [])], followUp: [...(this.followUpQueueValue?.peek() ?? [])] };
  }

  /** Stops the Subjects feeding the queues, now and for inputs made later. */
  close(): void {
    this.closed = true;
    this.steeringInputValue?.close();
    this.followUpInputValue?.close();
  }

  private get steeringInput(): QueueInput {
    return (this.steeringInputValue ??= this.input(this.steeringQueue));
  }

  private get followUpInput(): QueueInput {
    return (this.followUpInputValue ??= this.input(this.followUpQueue));
  }

  private input(queue: MessageQueue): QueueInput {
    const input = new QueueInput(queue);
    if (this.closed) input.close();
    return input;
  }
}
