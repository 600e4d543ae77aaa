import { randomUUID } from "node:crypto";
import { errorText } from "../errors.js";
import { safeJsonLine } from "../server/safe-json-line.js";
import { queuedFrom } from "../streams/queued-from.js";
import type { AgentMessage, QueuedMessages } from "../types.js";
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
 * lease (`dropped`); a reset deletes it. Each write also sets the counts every process's mirror
 * shows (`queuedSteering`, `queuedFollowUp`; `NOTE_QUEUE` in redis-scripts.ts).
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
    private readonly keys: { lease: string; queue: string; meta: string; frames: string },
    private readonly token: string,
  ) {}

  /** How many steers and follow-ups the list holds (after the write being sent). */
  get counts(): [steering: number, followUp: number] {
    let steering = 0;
    for (const entry of this.entries) if (entry.kind === "steer") steering += 1;
    return [steering, this.entries.length - steering];
  }

  /**
   * Queues on the new runner's agent (`queueOnAgent`), in order, the messages of `elements` (the
   * list as a new runner read it), and keeps them as not taken. An element that is not a queued
   * message, or whose message the agent refuses (`steer` checks it: a message from a process with a
   * larger `maxJsonDepth`, or written by hand), is removed from the list with a warning. Why
   * removed: no process can ever deliver it, and left there it was skipped again at every run, and
   * kept by a run end that had other messages of its kind queued. Resolves once the removal and the
   * counts reached Redis (nothing is sent for an empty list).
   */
  restore(elements: readonly string[], queueOnAgent: (kind: QueuedKind, message: AgentMessage) => void, warn: (message: string) => void): Promise<unknown> {
    const removed: string[] = [];
    for (const [index, element] of elements.entries()) {
      const entry = entryOf(element);
      if (!entry) {
        warn(`${this.keys.queue}[${index}]: removed an element that is not a queued message.`);
        removed.push(element);
        continue;
      }
      try {
        queueOnAgent(entry.kind, entry.message);
        this.entries.push(entry);
      } catch (error) {
        warn(`${this.keys.queue}[${index}]: removed a kept ${entry.kind} the agent refused: ${errorText(error)}`);
        removed.push(element);
      }
    }
    if (elements.length === 0) return Promise.resolve();
    return this.redis.rxagentUnqueue(this.keys.lease, this.keys.queue, this.keys.meta, this.token, ...this.counts, this.keys.frames, ...removed);
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
   * longer queues (`queued`, what it still does: `Agent.snapshot().queued`) and the run did not
   * take, for the release to remove. What the agent still queues stays on Redis for the session's
   * next run, on whichever process. Why by the messages themselves and not by the queue counts: a
   * message `continue` took (it is not marked as the loop's drains are, `queuedFrom`) that the run
   * never appended (`continue` threw after taking it) was kept while another of its kind waited.
   */
  dropped(queued: QueuedMessages): string[] {
    const waiting = new Set<AgentMessage>([...queued.steering, ...queued.followUp]);
    const kept: QueuedEntry[] = [];
    const dropped: string[] = [];
    for (const entry of this.entries) {
      if (waiting.has(entry.message)) kept.push(entry);
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
    return this.redis.rxagentQueueMessage(this.keys.lease, this.keys.queue, this.keys.meta, this.token, element, ...this.counts, this.keys.frames).then((length) => length > 0);
  }
}

function entryOf(element: string): QueuedEntry | undefined {
  try {
    const parsed = JSON.parse(element) as Partial<QueuedEntry> | null;
    // A message needs its role: the agent would take a plain object as `{ text }` input.
    const role = (parsed?.message as { role?: unknown } | null | undefined)?.role;
    if ((parsed?.kind !== "steer" && parsed?.kind !== "follow_up") || typeof parsed.message !== "object" || typeof role !== "string") return undefined;
    return { kind: parsed.kind, message: parsed.message, element };
  } catch {
    return undefined;
  }
}
