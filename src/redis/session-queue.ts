import { randomUUID } from "node:crypto";
import { safeJsonLine } from "../server/safe-json-line.js";
import { queuedFrom } from "../streams/queued-from.js";
import type { AgentMessage } from "../types.js";
import type { ScriptedRedis } from "./redis-scripts.js";

/** Which queue of the Agent a message waits in, named as the protocol's commands are. */
export type QueuedKind = "steer" | "follow_up";

/** A queued message and its element on Redis, which is unique (an id), so `LREM` removes exactly it. */
interface QueuedEntry {
  kind: QueuedKind;
  message: AgentMessage;
  element: string;
}

/**
 * The session's steering and follow-up messages on Redis (issue 28: an acked steer lived only in
 * the runner's Agent queue, and was lost when the runner died before its run took it). A message
 * the runner's agent queues is written to the session's `queue` list, fenced by the lease; the run
 * takes it in the same script as its transcript append (`take`, `rxagentFencedPush`); a process
 * that runs the session next (a takeover, a new prompt) queues what the list holds on its agent
 * again (`restore`). What the agent drops (an abort drops the steering) leaves the list with the
 * lease (`dropped`); a reset deletes it.
 */
export class SessionQueue {
  /** On Redis and not taken by the run yet, in the order they came. */
  private entries: QueuedEntry[] = [];
  /**
   * What the append of a message that was not queued here resolved to. Why: the run may take a
   * steer before this hears of it (the Agent's queue is fed first, and with
   * `steeringInterruptsTools` the steer ends the turn and is appended within the same call); then
   * no queue write is sent (it would come after the append and stay), and the append decides its ack.
   */
  private readonly appended = new WeakMap<object, Promise<boolean>>();
  /** Set by `watchNextAdd`: where the outcome of the next `add` goes. */
  private watching: { outcome?: Promise<boolean> } | undefined;

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: { lease: string; queue: string },
    private readonly token: string,
  ) {}

  /** Keeps `elements` (the list as a new runner read it) as not taken, and gives their messages to queue on its agent, in order. */
  restore(elements: readonly string[], warn: (message: string) => void): { kind: QueuedKind; message: AgentMessage }[] {
    for (const [index, element] of elements.entries()) {
      const entry = entryOf(element);
      if (entry) this.entries.push(entry);
      else warn(`${this.keys.queue}[${index}]: skipped an element that is not a queued message.`);
    }
    return this.entries.map(({ kind, message }) => ({ kind, message }));
  }

  /**
   * Writes a message the agent just queued to the list; resolves true once Redis stored it, false
   * when this process had lost the lease (Redis refused it), rejects when Redis did not answer.
   */
  add(kind: QueuedKind, message: AgentMessage): Promise<boolean> {
    const taken = this.appended.get(message);
    if (taken) this.appended.delete(message);
    const outcome = taken ?? this.send(kind, message);
    if (this.watching) {
      this.watching.outcome = outcome;
      this.watching = undefined;
    }
    return outcome;
  }

  /**
   * The element of `message`, which the run now appends to the transcript, for the append's
   * script to remove; "" for a message not queued here.
   */
  take(message: AgentMessage): string {
    const index = this.entries.findIndex((entry) => entry.message === message);
    return index === -1 ? "" : this.entries.splice(index, 1)[0]!.element;
  }

  /** The append of `message`, not queued here, went out: `stored` gives its outcome, for an `add` of it that comes after. */
  noteAppended(message: AgentMessage, stored: () => Promise<boolean>): void {
    // Only a message the loop drained can be one (`queuedFrom`): the others need no promise.
    if (queuedFrom(message) !== undefined) this.appended.set(message, stored());
  }

  /**
   * At the end of a run (its lease about to go back): the elements of the messages the agent no
   * longer queues and the run did not take, for the release to remove. Why counts suffice: the
   * Agent only ever empties a whole queue (`abort` the steering, `clearFollowUps`, `reset`), and
   * a message the loop drained for a turn that never came is marked so (`queuedFrom`). What the
   * agent still queues stays on Redis for the session's next run, on whichever process.
   */
  dropped(queuedSteering: number, queuedFollowUp: number): string[] {
    const kept: QueuedEntry[] = [];
    const dropped: string[] = [];
    for (const entry of this.entries) {
      const stillQueued = (entry.kind === "steer" ? queuedSteering : queuedFollowUp) > 0 && queuedFrom(entry.message) === undefined;
      if (stillQueued) kept.push(entry);
      else dropped.push(entry.element);
    }
    this.entries = kept;
    return dropped;
  }

  /** The session was reset: its reset script deleted the list. */
  forget(): void {
    this.entries = [];
  }

  /**
   * Watches the next `add`: the returned function gives its outcome, or undefined when none came
   * since. Why: a steer or follow-up is taken once Redis stored it (a takeover delivers it), and
   * not taken at all when Redis refused it.
   */
  watchNextAdd(): () => Promise<boolean> | undefined {
    const watch: { outcome?: Promise<boolean> } = {};
    this.watching = watch;
    return () => {
      if (this.watching === watch) this.watching = undefined;
      return watch.outcome;
    };
  }

  private send(kind: QueuedKind, message: AgentMessage): Promise<boolean> {
    const element = safeJsonLine({ id: randomUUID(), kind, message }).line.slice(0, -1);
    this.entries.push({ kind, message, element });
    return this.redis.rxagentQueueMessage(this.keys.lease, this.keys.queue, this.token, element).then((length) => length > 0);
  }
}

function entryOf(element: string): QueuedEntry | undefined {
  try {
    const parsed = JSON.parse(element) as Partial<QueuedEntry> | null;
    if ((parsed?.kind !== "steer" && parsed?.kind !== "follow_up") || typeof parsed.message !== "object" || parsed.message === null) return undefined;
    return { kind: parsed.kind, message: parsed.message, element };
  } catch {
    return undefined;
  }
}
