import { concat, EMPTY, type Subscription } from "rxjs";
import { errorText } from "../errors.js";
import { type ArgumentText, MessageDeltaEncoder } from "../protocol/message-delta.js";
import { sessionFrameOf } from "../server/rebuilt-update-frame.js";
import { mergeableUpdate } from "../server/mergeable-update.js";
import type { Agent } from "../agent/agent.js";
import type { AgentEvent, AgentMessage } from "../types.js";
import type { RedisSessionContext } from "./redis-session-context.js";
import type { RedisTranscriptStore } from "./redis-transcript-store.js";
import type { SessionKeys } from "./session-keys.js";
import type { SessionMirror } from "./session-mirror.js";
import type { QueuedKind, SessionQueue } from "./session-queue.js";

/** What clients read in `agent_end.errorMessage` when the run's transcript could not be saved to Redis. */
export function transcriptLostText(cause: string): string {
  return `The transcript could not be saved to Redis (${cause}); the run ended as failed, so that no process continues it from a transcript that misses messages.`;
}

/**
 * What the running tools' signals fire with (`signal.reason`, an Error with this message) when
 * this process learns it lost the session's lease: another process may already run the session.
 */
export const SESSION_MOVED_TEXT = "The session moved to another process: this process lost its lease, so its run stopped here.";

/**
 * The run of a session in the one process that holds its lease: the Agent's events get their
 * sequence numbers here, go to the local clients at once, and to Redis (stream and channel)
 * through a script fenced by the lease. The lease is renewed every third of its time while the
 * run lives; once lost, this process stops the run, since another may have taken it over.
 */
export class SessionRunner {
  private readonly encoder: MessageDeltaEncoder;
  private readonly argumentTexts = (): ArgumentText[] => this.encoder.argumentTexts();
  private subscription: Subscription | undefined;
  private readonly renewal: ReturnType<typeof setInterval>;
  private ended = false;
  private lost = false;
  /** Whether Redis took the release (the lease was still this runner's), once `release` sent it. */
  private released: Promise<boolean> | undefined;

  constructor(
    private readonly context: RedisSessionContext,
    private readonly keys: SessionKeys,
    private readonly mirror: SessionMirror,
    readonly agent: Agent,
    readonly store: RedisTranscriptStore,
    readonly token: string,
    /**
     * Called when this runner stops: its run ended (`lost` false), or its lease was lost. Called
     * once more (`lost` true) when Redis refuses frames sent before a run that ended here: the
     * lease expired while Redis was down, so the clients here saw frames Redis never got.
     */
    private readonly onEnd: (runner: SessionRunner, lost: boolean) => void,
  ) {
    this.encoder = new MessageDeltaEncoder({ argumentsFromText: context.protocol >= 3 });
    // Snapshots made here while this process runs the session carry the texts this encoder holds.
    mirror.ownArgumentTexts = this.argumentTexts;
    this.renewal = setInterval(() => this.renew(), Math.max(1, Math.floor(context.leaseMs / 3)));
    this.renewal.unref();
  }

  /**
   * Publishes the agent's events from now on. A run `Agent.open` reopened (calls that wait for
   * approval) began before this runner listened: its events so far are replayed first.
   */
  start(): void {
    const { agent } = this;
    const subscription = concat(agent.currentRun$ ?? EMPTY, agent.events$).subscribe({
      next: (event) => {
        this.publish(event);
        if (event.type === "agent_end" && !agent.isRunning) this.release();
      },
      // The agent's loop failed: the run is over here, and its lease goes back.
      error: () => this.release(),
    });
    this.subscription = subscription;
    const queue = this.store.queue;
    if (!queue || this.ended) return;
    // Every steer or follow-up the agent queues from now on is kept on Redis until its run takes it.
    subscription.add(agent.steering.subscribe((message) => this.keepQueued(queue, "steer", message)));
    subscription.add(agent.followUps.subscribe((message) => this.keepQueued(queue, "follow_up", message)));
  }

  /** Records where the run's state starts (so a process that joins later rebuilds it). */
  markRunStart(): void {
    const { redis } = this.context;
    redis.rxagentStartRun(this.keys.lease, this.keys.meta, this.token, this.mirror.lastSeq, this.agent.state.messages.length).catch((error: unknown) => this.context.warn(`session ${this.mirror.id}: could not mark the run's start: ${errorText(error)}`));
  }

  /** Gives the session one more frame, numbered after the last one. */
  publish(event: AgentEvent): void {
    const seq = this.mirror.lastSeq + 1;
    const frame = this.frameOf(seq, event);
    if (frame === undefined) return;
    const { json, update } = frame;
    const { redis, maxEvents, eventTtlMs } = this.context;
    redis.rxagentAppendFrame(this.keys.lease, this.keys.events, this.keys.meta, this.token, seq, event.type, json, maxEvents, eventTtlMs, this.keys.frames).then(
      (appended) => {
        if (appended === 0) this.lose("its lease was taken by another process");
      },
      (error: unknown) => this.context.warn(`session ${this.mirror.id}: could not append frame ${seq} to Redis: ${errorText(error)}`),
    );
    const mergeable = update ? mergeableUpdate(update.event, this.encoder) : undefined;
    this.mirror.applyOwn({ seq, type: event.type, json }, event, mergeable);
  }

  /**
   * The frame of `event`, or `undefined` for an event that cannot be encoded or serialized (JSON
   * longer than a string may be): it is left out, with a warning, and the encoder starts
   * afresh, so its next update sends the streamed message's blocks whole.
   *
   * Why: this runs inside the agent's `events$` subscriber, where a throw is rethrown by rxjs on
   * a timer and ends the process (as the session hub's `publish` says), and here each process
   * that took the session over in turn.
   */
  private frameOf(seq: number, event: AgentEvent): ReturnType<typeof sessionFrameOf> | undefined {
    try {
      return sessionFrameOf(this.encoder, seq, event);
    } catch (error) {
      this.encoder.clear();
      this.context.warn(`session ${this.mirror.id}: its "${event.type}" event could not be sent: ${errorText(error)}`);
      return undefined;
    }
  }

  /**
   * The store could not save the transcript (Redis refused an append, or it waited past its
   * bound): the run ends here as failed, and the session is marked so that a process that finds
   * the run orphaned does not continue it from a transcript that misses messages.
   */
  transcriptFailed(error: Error): void {
    if (this.ended) return;
    const { redis } = this.context;
    redis.rxagentMarkBroken(this.keys.lease, this.keys.meta, this.token).catch((markError: unknown) => this.context.warn(`session ${this.mirror.id}: could not mark its transcript broken: ${errorText(markError)}`));
    this.subscription?.unsubscribe();
    this.publish({ type: "agent_end", messages: [], reason: "failed", errorMessage: transcriptLostText(error.message) });
    this.release();
  }

  /** Stops without waiting for the run: the process is going away, or another holds the lease. */
  dispose(lost = false): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.renewal);
    if (this.mirror.ownArgumentTexts === this.argumentTexts) this.mirror.ownArgumentTexts = undefined;
    this.subscription?.unsubscribe();
    this.agent.dispose();
    this.onEnd(this, lost);
  }

  /** The run ended (or never started): the lease goes back (with the run's start marker), for any process to take. */
  release(): void {
    if (this.ended) return;
    const { redis } = this.context;
    // Sent before anything else this process sends for the session, on the same connection,
    // so a prompt right after this one finds the lease free.
    const queue = this.store.queue;
    const dropped = queue?.dropped(this.agent.snapshot().queued) ?? [];
    const [steering, followUp] = queue?.counts ?? [0, 0];
    const released = redis.rxagentReleaseLease(this.keys.lease, this.keys.meta, this.keys.queue, this.token, steering, followUp, this.keys.frames, ...dropped);
    this.released = released.then((count) => count === 1);
    this.released.catch(() => undefined);
    released.then(
      (count) => {
        if (count === 0) this.lose("its lease expired before the run's end reached Redis");
      },
      (error: unknown) => this.context.warn(`session ${this.mirror.id}: could not release its lease: ${errorText(error)}`),
    );
    this.dispose();
  }

  /**
   * Resolves true once Redis has confirmed that this runner still held the lease after every
   * write it sent so far, so Redis stored each of them; false when it had lost the lease (Redis
   * refused them from some point on); rejects when Redis did not answer. Why it proves every
   * earlier write: they went before it on the same connection, Redis runs one connection's
   * commands in order, and a lease that left this token never comes back to it. A runner that
   * released its lease has its answer in the release, the last write it sent.
   */
  confirmWrites(): Promise<boolean> {
    if (this.lost) return Promise.resolve(false);
    if (this.released) return this.released;
    return this.context.redis.rxagentRenewLease(this.keys.lease, this.token, this.context.leaseMs).then((renewed) => {
      if (renewed === 1) return true;
      this.lose("its lease expired before a command's writes reached Redis");
      return false;
    });
  }

  /** A message the agent queued: kept on Redis; a refusal means the lease was lost before it. */
  private keepQueued(queue: SessionQueue, kind: QueuedKind, message: AgentMessage): void {
    queue.add(kind, message).then(
      (stored) => {
        if (!stored) this.lose(`its lease expired before a ${kind} reached Redis`);
      },
      (error: unknown) => this.context.warn(`session ${this.mirror.id}: could not keep a ${kind} on Redis: ${errorText(error)}`),
    );
  }

  private renew(): void {
    this.context.redis.rxagentRenewLease(this.keys.lease, this.token, this.context.leaseMs).then(
      (renewed) => {
        if (renewed === 0) this.lose("its lease expired before it was renewed");
      },
      // Redis may be restarting: the next renewal tries again, and a lease that expired meanwhile is lost then.
      (error: unknown) => this.context.warn(`session ${this.mirror.id}: could not renew its lease: ${errorText(error)}`),
    );
  }

  private lose(why: string): void {
    if (this.lost) return;
    this.lost = true;
    if (!this.ended) {
      this.context.warn(`session ${this.mirror.id}: stopped its run here: ${why}.`);
      // Redis refuses what the run would publish now; the tools still running hear why they stop.
      this.subscription?.unsubscribe();
      this.store.supersede();
      this.agent.abort({ reason: new Error(SESSION_MOVED_TEXT) });
      return this.dispose(true);
    }
    // The run ended here while Redis was down, and its last frames were refused when it came back:
    // another process will take the run over from what Redis holds.
    this.context.warn(`session ${this.mirror.id}: Redis refused frames of the run that ended here (${why}); its clients here get a snapshot.`);
    this.onEnd(this, true);
  }
}
