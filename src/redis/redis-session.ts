import { randomUUID } from "node:crypto";
import { errorText } from "../errors.js";
import type { ClientCommand, SnapshotFrame } from "../protocol/protocol-schemas.js";
import type { ClientConnection, ClientStats } from "../server/client-connection.js";
import { errorFrame, executeCommand } from "../server/execute-command.js";
import type { CommandReplies, HostedSession } from "../server/hosted-session.js";
import type { Agent } from "../agent/agent.js";
import { answerWithoutRunner, forwardedCommand, type ForwardedCommand, remoteReplies } from "./forwarded-command.js";
import { readSession } from "./read-session.js";
import type { RedisSessionContext } from "./redis-session-context.js";
import { RedisTranscriptStore } from "./redis-transcript-store.js";
import { type SessionKeys, sessionKeys } from "./session-keys.js";
import type { SessionMirror } from "./session-mirror.js";
import { SessionRunner, transcriptLostText } from "./session-runner.js";

type Command = Exclude<ClientCommand, { type: "attach" }>;

/** What watching clients read in `agent_end.errorMessage` when a process takes over a run whose runner died. */
export const TAKEOVER_TEXT = "The process running this session stopped before the run ended; another process took the session over.";

/** What clients read in `agent_end.errorMessage` when a run was taken over too often without progress (`maxTakeovers`). */
export function takeoverLimitText(takeovers: number): string {
  return `The run was taken over ${takeovers} times without saving anything new to the transcript (each process running it stopped at the same point); it ended as failed instead of being continued again.`;
}

/** The sequence number at the start of a stream frame (`{"type":"event","seq":12,...`). */
const FRAME_SEQ = /^\{"type":"(?:event|update)","seq":(\d+),/;

/**
 * A session shared by several processes through Redis, as one process serves it: a mirror of its
 * frames and state for the clients attached here, and, while this process holds the session's
 * lease, the runner of its Agent. Commands go to the runner: run here when this process holds
 * (or can take) the lease, else published on the session's command channel for the process that
 * does. A run whose runner died is taken over by the first process that finds the lease expired.
 */
export class RedisSession implements HostedSession {
  private runner: SessionRunner | undefined;
  /** Commands of this process wait for the one before them (a prompt may be taking the lease). */
  private queue: Promise<void> | undefined;
  /** Frames that arrived while the mirror was being filled from the stream. */
  private held: string[] | undefined = [];
  private readonly watch: ReturnType<typeof setInterval>;
  private closed = false;
  private reloading = false;
  private mirror!: SessionMirror;

  private constructor(
    private readonly context: RedisSessionContext,
    readonly id: string,
    private readonly keys: SessionKeys,
    private readonly onClose: (session: RedisSession) => void,
  ) {
    this.watch = setInterval(() => this.takeOverIfOrphaned(), Math.max(1, Math.floor(context.leaseMs / 2)));
    this.watch.unref();
  }

  /** Joins a session: listens to its frames, then reads its transcript, its stream and where its live run started. */
  static async open(context: RedisSessionContext, sessionId: string, onClose: (session: RedisSession) => void = () => undefined): Promise<RedisSession> {
    const keys = sessionKeys(context.keyPrefix, sessionId);
    const session = new RedisSession(context, sessionId, keys, onClose);
    try {
      await context.listen(keys.frames, (message) => session.receive(message));
      await session.load();
    } catch (error) {
      session.close();
      throw error;
    }
    session.takeOverIfOrphaned();
    return session;
  }

  get lastSeq(): number {
    return this.mirror.lastSeq;
  }

  get epoch(): string {
    return this.mirror.epoch;
  }

  get clientCount(): number {
    return this.mirror.clientCount;
  }

  get isRunning(): boolean {
    return this.runner !== undefined || this.mirror.isRunning;
  }

  get agent(): Agent | undefined {
    return this.runner?.agent;
  }

  clientStats(): ClientStats[] {
    return this.mirror.clientStats();
  }

  snapshot(): SnapshotFrame {
    return this.mirror.snapshot();
  }

  resumeMode(lastSeq: number | undefined, epoch?: string): "replay" | "snapshot" {
    return this.mirror.resumeMode(lastSeq, epoch);
  }

  attach(client: ClientConnection, lastSeq: number | undefined, epoch?: string): void {
    this.mirror.attach(client, lastSeq, epoch);
  }

  detach(client: ClientConnection): void {
    this.mirror.detach(client);
  }

  execute(command: Command, replies: CommandReplies): void {
    if (this.queue === undefined && this.runner) {
      this.executeHere(this.runner, command, replies);
      return;
    }
    replies.hold();
    const previous = this.queue ?? Promise.resolve();
    const next = previous.then(() => this.route(command, replies)).catch((error: unknown) => replies.release(errorFrame(command.id, "internal", errorText(error))));
    this.queue = next;
    void next.then(() => {
      if (this.queue === next) this.queue = undefined;
    });
  }

  async stop(timeoutMs: number): Promise<void> {
    const agent = this.runner?.agent;
    if (!agent?.isRunning) return;
    agent.abort();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    // A runner that lost its lease (or its transcript) meanwhile disposed the agent: that is idle too.
    await Promise.race([agent.waitForIdle().catch(() => undefined), timeout]);
    clearTimeout(timer);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watch);
    this.context.unlisten(this.keys.frames);
    this.runner?.dispose();
    this.mirror?.close();
    this.onClose(this);
  }

  /** Reads the frames the channel may have missed (it was down) from the stream. */
  resync(): void {
    if (this.held || !this.mirror) return;
    this.readStream().catch((error: unknown) => this.context.warn(`session ${this.id}: could not read missed frames: ${errorText(error)}`));
  }

  /** Reads the session in one transaction; frames published meanwhile wait in `held`. */
  private async load(): Promise<void> {
    this.mirror = await readSession(this.context.redis, this.keys, this.id, this.context.maxEvents, this.context.warn);
    const held = this.held ?? [];
    this.held = undefined;
    for (const message of held) this.receive(message);
  }

  /**
   * Reads the session again after this process lost its lease: the frames it made after the
   * loss were refused, and the new runner numbers its own from the last stored one, so the
   * clients here start again from a snapshot.
   */
  private reload(): void {
    if (this.reloading) return;
    this.reloading = true;
    const previous = this.mirror;
    this.held = [];
    const reloaded = this.load().then(
      () => {
        this.reloading = false;
        previous.handOver(this.mirror);
      },
      (error: unknown) => {
        this.reloading = false;
        this.held = undefined;
        this.context.warn(`session ${this.id}: could not read it again after losing its lease: ${errorText(error)}`);
      },
    );
    // Commands and takeovers wait for it. A takeover made meanwhile ran on the mirror being
    // replaced, which holds the frames Redis refused: it numbered its frames after them, and the
    // hole it left in the stream stopped every mirror before it (issue 28, the chaos test's resume
    // that never reached the last stored frame).
    const queued = (this.queue ?? Promise.resolve()).then(() => reloaded);
    this.queue = queued;
    void queued.then(() => {
      if (this.queue === queued) this.queue = undefined;
    });
  }

  /** A frame or a reset published by the runner (possibly this process's own, already applied). */
  private receive(message: string): void {
    if (this.held) {
      this.held.push(message);
      return;
    }
    const match = FRAME_SEQ.exec(message);
    if (!match) {
      const reset = JSON.parse(message) as { type: "reset"; seq: number; epoch: string };
      if (reset.epoch !== this.mirror.epoch) this.mirror.reset(reset.seq, reset.epoch);
      return;
    }
    if (!this.apply(Number(match[1]), message)) this.catchUp(message);
  }

  /** A frame came after a gap (the channel was down): the missing ones come from the stream. */
  private catchUp(message: string): void {
    this.held = [message];
    const from = this.mirror.lastSeq + 1;
    this.context.redis.xrange(this.keys.events, `${from}-0`, "+").then(
      (entries) => {
        const held = this.held ?? [];
        this.held = undefined;
        for (const [id, fields] of entries) this.apply(Number.parseInt(id, 10), fields[3] as string);
        for (const later of held) {
          const match = FRAME_SEQ.exec(later);
          if (match && !this.apply(Number(match[1]), later)) this.context.warn(`session ${this.id}: frame ${match[1]} came after a gap the stream no longer covers; clients here may need a snapshot.`);
        }
      },
      (error: unknown) => {
        this.held = undefined;
        this.context.warn(`session ${this.id}: could not read missed frames: ${errorText(error)}`);
      },
    );
  }

  /** The next command of this process for the session, once the one before it is done. */
  private async route(command: Command, replies: CommandReplies): Promise<void> {
    if (this.runner) return this.executeHere(this.runner, command, replies, true);
    if (command.type === "prompt" || command.type === "continue" || command.type === "reset") {
      // Undefined twice only when another process holds the lease; once also when this takeover ended a run past `maxTakeovers`.
      const runner = (await this.takeLease()) ?? (this.mirror.isRunning ? undefined : await this.takeLease());
      if (runner) {
        this.executeHere(runner, command, replies, true);
        // A continue with nothing to do, or a reset, leaves no run: the lease goes back.
        if (!runner.agent.isRunning) runner.release();
        return;
      }
    }
    await this.forward(command, replies);
  }

  private executeHere(runner: SessionRunner, command: Command, replies: CommandReplies, held = false): void {
    const target: CommandReplies = held ? { sendFrame: (frame) => replies.release(frame), hold: () => undefined, release: (frame) => replies.release(frame) } : replies;
    executeCommand(runner.agent, command, target, () => this.resetHere(runner, command.id, target));
  }

  /** A reset by the runner: the transcript and frames go, a new epoch starts after one more sequence number. */
  private resetHere(runner: SessionRunner, commandId: string, replies: CommandReplies): void {
    const seq = this.mirror.lastSeq + 1;
    const epoch = randomUUID();
    const json = JSON.stringify({ type: "reset", seq, epoch });
    const { keys } = this;
    this.context.redis.rxagentResetSession(keys.lease, keys.transcript, keys.events, keys.meta, runner.token, seq, epoch, json, keys.frames).catch((error: unknown) => this.context.warn(`session ${this.id}: could not reset it on Redis: ${errorText(error)}`));
    replies.sendFrame({ type: "ack", id: commandId });
    this.mirror.reset(seq, epoch);
  }

  /** Sends a command to the process that runs the session, and its answer back to `replies`. */
  private async forward(command: Command, replies: CommandReplies): Promise<void> {
    const replyId = randomUUID();
    this.context.expectReply(replyId, command.id, replies);
    const message: ForwardedCommand = { command, replyChannel: this.context.replyChannel, replyId };
    const receivers = await this.context.redis.publish(this.keys.commands, JSON.stringify(message)).catch((error: unknown) => {
      this.context.forgetReply(replyId);
      throw error;
    });
    if (receivers > 0) return;
    this.context.forgetReply(replyId);
    replies.release(answerWithoutRunner(command, this.context.leaseMs));
  }

  /** A command another process forwarded: answered only by the process that runs the session. */
  private receiveCommand(message: string): void {
    const forwarded = forwardedCommand(message);
    if (!forwarded) return this.context.warn(`session ${this.id}: ignored a malformed forwarded command.`);
    const replies = remoteReplies(this.context.redis, forwarded);
    const answer = (): void => {
      const runner = this.runner;
      // The run ended between the publish and now: answered as if no process had listened.
      if (!runner) return replies.sendFrame(answerWithoutRunner(forwarded.command, this.context.leaseMs));
      executeCommand(runner.agent, forwarded.command, replies, () => this.resetHere(runner, forwarded.command.id, replies));
    };
    // While this process is still opening the Agent it took the lease for, the command waits for it.
    if (!this.runner && this.queue) void this.queue.then(answer);
    else answer();
  }

  /**
   * Takes the lease and becomes the session's runner, or undefined when another process holds
   * it. A run the frames show as live has lost its runner: it is closed with an `agent_end`
   * saying so before anything else runs.
   */
  private async takeLease(): Promise<SessionRunner | undefined> {
    const { redis, leaseMs, processId } = this.context;
    const token = `${processId}:${randomUUID()}`;
    if ((await redis.set(this.keys.lease, token, "PX", leaseMs, "NX")) !== "OK") return undefined;
    let takeovers = 0;
    try {
      // Only the runner listens for commands: a command no process receives has no runner to answer it.
      await this.context.listen(this.keys.commands, (message) => this.receiveCommand(message));
      // Frames of the previous runner may still be on their way through the channel: the stream has them all.
      await this.readStream();
      // Counted before a runner exists: a takeover that Redis fails here (it restarts) leaves only a
      // lease that expires, and a later one starts again. A runner made first kept renewing the
      // lease of a run it never started, and the session was wedged for as long as the process lived.
      if (this.mirror.isRunning) takeovers = await redis.rxagentCountTakeover(this.keys.lease, this.keys.meta, token);
    } catch (error) {
      this.context.unlisten(this.keys.commands);
      throw error;
    }
    let runner: SessionRunner | undefined;
    const store = new RedisTranscriptStore(redis, this.id, {
      keyPrefix: this.context.keyPrefix,
      fenceToken: token,
      ...this.context.saveBounds,
      onFailure: (error) => runner?.transcriptFailed(error),
      onWarning: (text) => this.context.warn(text),
    });
    let agent: Agent;
    try {
      agent = await this.context.createAgent(this.id, store);
    } catch (error) {
      this.context.unlisten(this.keys.commands);
      await redis.rxagentReleaseLease(this.keys.lease, this.keys.meta, token);
      throw new Error(`createAgent failed: ${errorText(error)}`, { cause: error });
    }
    runner = new SessionRunner(this.context, this.keys, this.mirror, agent, store, token, (ended, lost) => {
      if (this.runner === ended) {
        this.runner = undefined;
        this.context.unlisten(this.keys.commands);
      } else if (this.runner) {
        // A later run here publishes into the mirror: reading the session again would pull it from under it.
        if (lost) this.context.warn(`session ${this.id}: frames of an earlier run were refused while a later one runs here; its clients may need a snapshot.`);
        return;
      }
      if (lost && !this.closed) this.reload();
    });
    this.runner = runner;
    if (this.mirror.isRunning) {
      this.announceUnframedMessages(runner);
      runner.publish({ type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT });
      if (takeovers === -1) {
        // Its runner could not save every message: going on would tell the model a story with holes.
        runner.publish({ type: "agent_end", messages: [], reason: "failed", errorMessage: transcriptLostText("messages of this run never reached it") });
        runner.release();
        return undefined;
      }
      if (takeovers > this.context.maxTakeovers) {
        // The run died at the same point again and again (a reply or a tool that crashes its process): it ends here.
        runner.publish({ type: "agent_end", messages: [], reason: "failed", errorMessage: takeoverLimitText(takeovers - 1) });
        runner.release();
        return undefined;
      }
    }
    runner.markRunStart();
    runner.start();
    return runner;
  }

  /**
   * Publishes, within the dead run, the messages its transcript holds past what its frames told:
   * the runner appends a message and then sends its frame, two writes fenced by the lease, and a
   * lease that expired between them (or Redis killed between them) keeps the first and refuses the
   * second (chaos test, seed 28). Told now, frames and transcript agree, and the clients see the
   * message the next run goes on from.
   */
  private announceUnframedMessages(runner: SessionRunner): void {
    for (const message of runner.agent.state.messages.slice(this.mirror.messages.length)) {
      runner.publish({ type: "message_start", message });
      runner.publish({ type: "message_end", message });
    }
  }

  /** Applies every frame of the stream after the mirror's last one. */
  private async readStream(): Promise<void> {
    const entries = await this.context.redis.xrange(this.keys.events, `${this.mirror.lastSeq + 1}-0`, "+");
    for (const [id, fields] of entries) this.apply(Number.parseInt(id, 10), fields[3] as string);
  }

  /**
   * Applies a frame read from Redis to the mirror. A frame the mirror cannot follow (an update
   * whose message it never saw started, seen in the chaos test after a takeover) must not throw
   * inside ioredis's event handler, where it would crash the process: the session is read again
   * and the clients here get a snapshot. Returns false when the frame is not the next one.
   */
  private apply(seq: number, json: string): boolean {
    try {
      return this.mirror.applyJson(seq, json);
    } catch (error) {
      this.context.warn(`session ${this.id}: frame ${seq} could not be applied (${errorText(error)}); reading the session again.`);
      this.reload();
      return true;
    }
  }

  /**
   * The frames show a live run, no process holds the lease: its runner died. This process takes
   * it over: the transcript is reloaded, a run that stopped mid-way (unanswered tool calls, a
   * prompt without a reply) goes on, repaired; otherwise the session is left idle.
   */
  private takeOverIfOrphaned(): void {
    if (this.closed || this.runner || this.queue || !this.mirror?.isRunning) return;
    const takeover = this.takeLease().then((runner) => {
      // A run `Agent.open` reopened (calls waiting for approval) goes on by itself.
      if (!runner || runner.agent.isRunning) return;
      try {
        runner.agent.continue();
      } catch {
        // Nothing was left to do (the run had answered): the session is idle again.
        runner.release();
      }
    });
    this.queue = takeover.catch((error: unknown) => this.context.warn(`session ${this.id}: could not take over: ${errorText(error)}`));
    const queued = this.queue;
    void queued.then(() => {
      if (this.queue === queued) this.queue = undefined;
    });
  }
}
