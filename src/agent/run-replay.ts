import { Observable, type Observer, ReplaySubject, Subject } from "rxjs";
import type { AgentEvent } from "../types.js";

/**
 * How an `Agent` replays a run's events to a subscriber that comes after they were emitted
 * (`prompt`, `continue`, `currentRun$`): `"full"` keeps every event; `"compact"` lets go of the
 * updates of what has ended (see `CompactRunReplay`).
 */
export type RunReplay = "full" | "compact";

/** A run's events as the agent emits them (`next`, then `complete` or `error`) and as they are replayed. */
export type RunEvents<TEvent> = Observer<TEvent> & { asObservable(): Observable<TEvent> };

/** The buffer for a run's events under `mode`: rxjs's `ReplaySubject` for `"full"`. */
export function newRunEvents<TOutput>(mode: RunReplay): RunEvents<AgentEvent<unknown, TOutput>> {
  return mode === "compact" ? new CompactRunReplay<TOutput>() : new ReplaySubject<AgentEvent<unknown, TOutput>>();
}

/**
 * A `ReplaySubject` for one run's events that forgets the progress of what has finished: once
 * a message's `message_end` is buffered, its `message_update`s are dropped; once a call's
 * `tool_execution_end` is buffered, its `tool_execution_update`s are dropped (a sub-agent's
 * events ride in those). Every other event is kept, and so are the updates of the message or
 * the calls still open, so a late subscriber sees each lifecycle event, each final message
 * and where the open ones stand, in the order they came. A subscriber that is there already
 * gets every event, as from a `Subject`.
 *
 * Why: a full replay of a streamed run holds every partial message, one per delta (10,000
 * small calls kept about 75-85 MB of events for 0.54 MB of arguments; bench/README.md, "Streamed
 * tool arguments"), though a subscriber that comes late needs only the finished messages.
 *
 * ```text
 * emitted:           start  update₁  update₂  end  tool_start  tool_update  tool_end
 * replayed after it: start                    end  tool_start               tool_end
 * ```
 *
 * As `ReplaySubject`, a new subscriber is registered for what comes next before the buffer is
 * replayed to it, and hears the `complete` or `error` after the replay.
 */
export class CompactRunReplay<TOutput> implements RunEvents<AgentEvent<unknown, TOutput>> {
  private readonly live = new Subject<AgentEvent<unknown, TOutput>>();
  /** The kept events in order; a dropped one leaves a hole until the next compaction. */
  private buffer: (AgentEvent<unknown, TOutput> | undefined)[] = [];
  private holes = 0;
  /** Where the open message's `message_update`s are in `buffer` (messages stream one at a time). */
  private messageUpdates: number[] = [];
  /** Where each open call's `tool_execution_update`s are in `buffer`. */
  private toolUpdates = new Map<string, number[]>();
  private ending: { error: unknown } | "complete" | undefined;

  /** How many events a late subscriber would be replayed now. */
  get bufferedCount(): number {
    return this.buffer.length - this.holes;
  }

  next(event: AgentEvent<unknown, TOutput>): void {
    if (this.ending) return;
    this.keep(event);
    this.live.next(event);
  }

  error(error: unknown): void {
    if (this.ending) return;
    this.ending = { error };
    this.live.error(error);
  }

  complete(): void {
    if (this.ending) return;
    this.ending = "complete";
    this.live.complete();
  }

  asObservable(): Observable<AgentEvent<unknown, TOutput>> {
    return new Observable((subscriber) => {
      const replayed = this.buffer.slice();
      const ending = this.ending;
      const subscription = ending ? undefined : this.live.subscribe(subscriber);
      for (const event of replayed) {
        if (subscriber.closed) break;
        if (event) subscriber.next(event);
      }
      if (ending === "complete") subscriber.complete();
      else if (ending) subscriber.error(ending.error);
      return subscription;
    });
  }

  private keep(event: AgentEvent<unknown, TOutput>): void {
    const index = this.buffer.length;
    this.buffer.push(event);
    switch (event.type) {
      case "message_update":
        this.messageUpdates.push(index);
        break;
      case "message_end":
        this.drop(this.messageUpdates);
        this.messageUpdates = [];
        break;
      case "tool_execution_update":
        this.noteToolUpdate(event.toolCallId, index);
        break;
      case "tool_execution_end": {
        const updates = this.toolUpdates.get(event.toolCallId);
        if (updates) {
          this.toolUpdates.delete(event.toolCallId);
          this.drop(updates);
        }
        break;
      }
    }
  }

  private drop(indexes: readonly number[]): void {
    for (const index of indexes) this.buffer[index] = undefined;
    this.holes += indexes.length;
    // Compacting once the holes are half the buffer keeps each event's cost constant on average.
    if (this.holes > 64 && this.holes * 2 > this.buffer.length) this.compact();
  }

  /** Closes the holes, and moves the open updates' positions with their events. */
  private compact(): void {
    const kept: AgentEvent<unknown, TOutput>[] = [];
    this.messageUpdates = [];
    this.toolUpdates = new Map();
    for (const event of this.buffer) {
      if (!event) continue;
      if (event.type === "message_update") this.messageUpdates.push(kept.length);
      else if (event.type === "tool_execution_update") this.noteToolUpdate(event.toolCallId, kept.length);
      kept.push(event);
    }
    this.buffer = kept;
    this.holes = 0;
  }

  private noteToolUpdate(toolCallId: string, index: number): void {
    const updates = this.toolUpdates.get(toolCallId);
    if (updates) updates.push(index);
    else this.toolUpdates.set(toolCallId, [index]);
  }
}
