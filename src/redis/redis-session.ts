import { randomUUID } from "node:crypto";
import { errorText } from "../errors.js";
import type { ClientCommand, ProtocolVersion, ServerFrame, SnapshotFrame } from "../protocol/protocol-schemas.js";
import type { ClientStats } from "../server/backpressure.js";
import type { ClientConnection } from "../server/client-connection.js";
import { errorFrame, executeCommand } from "../server/execute-command.js";
import type { CommandReplies, HostedSession } from "../server/hosted-session.js";
import type { Agent } from "../agent/agent.js";
import { confirmAck, sessionMovedText } from "./command-confirmation.js";
import { CommandQueue } from "./command-queue.js";
import { answerWithoutRunner, forwardedCommand, type ForwardedCommand, remoteReplies } from "./forwarded-command.js";
import type { RedisSessionContext } from "./redis-session-context.js";
import { SessionFrames } from "./session-frames.js";
import { type SessionKeys, sessionKeys } from "./session-keys.js";
import type { SessionRunner } from "./session-runner.js";
import { type LeaseTaker, takeLease } from "./session-takeover.js";

type Command = Exclude<ClientCommand, { type: "attach" }>;

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
  private readonly queue = new CommandQueue();
  private readonly frames: SessionFrames;
  private readonly leaseTaker: LeaseTaker;
  private readonly watch: ReturnType<typeof setInterval>;
  private closed = false;
  /** The last frame at which Redis said the run that ended there was not left off (no takeover owed). */
  private settledAt = -1;

  private constructor(
    private readonly context: RedisSessionContext,
    readonly id: string,
    private readonly keys: SessionKeys,
    private readonly onClose: (session: RedisSession) => void,
  ) {
    this.frames = new SessionFrames(context, id, keys, this.queue);
    this.leaseTaker = {
      context,
      id,
      keys,
      frames: this.frames,
      receiveCommand: (message) => this.receiveCommand(message),
      adopt: (runner) => (this.runner = runner),
      runnerEnded: (ended, lost) => this.runnerEnded(ended, lost),
    };
    this.watch = setInterval(() => this.takeOverIfOrphaned(), Math.max(1, Math.floor(context.leaseMs / 2)));
    this.watch.unref();
  }

  /** Joins a session: listens to its frames, then reads its transcript, its stream and where its live run started. */
  static async open(context: RedisSessionContext, sessionId: string, onClose: (session: RedisSession) => void = () => undefined): Promise<RedisSession> {
    const keys = sessionKeys(context.keyPrefix, sessionId);
    const session = new RedisSession(context, sessionId, keys, onClose);
    try {
      await context.listen(keys.frames, (message) => session.frames.receive(message));
      await session.frames.load();
    } catch (error) {
      session.close();
      throw error;
    }
    session.takeOverIfOrphaned();
    return session;
  }

  get lastSeq(): number {
    return this.frames.mirror.lastSeq;
  }

  get epoch(): string {
    return this.frames.mirror.epoch;
  }

  get clientCount(): number {
    return this.frames.mirror.clientCount;
  }

  /** The protocol this process's runner writes frames in (`redisSessions`' `protocol`). */
  get protocol(): ProtocolVersion {
    return this.context.protocol;
  }

  get isRunning(): boolean {
    return this.runner !== undefined || this.frames.mirror.isRunning;
  }

  get agent(): Agent | undefined {
    return this.runner?.agent;
  }

  clientStats(): ClientStats[] {
    return this.frames.mirror.clientStats();
  }

  snapshot(): SnapshotFrame {
    return this.frames.mirror.snapshot();
  }

  resumeMode(lastSeq: number | undefined, epoch?: string): "replay" | "snapshot" {
    return this.frames.mirror.resumeMode(lastSeq, epoch);
  }

  attach(client: ClientConnection, lastSeq: number | undefined, epoch?: string): void {
    this.frames.mirror.attach(client, lastSeq, epoch);
  }

  detach(client: ClientConnection): void {
    this.frames.mirror.detach(client);
  }

  execute(command: Command, replies: CommandReplies): void {
    if (!this.queue.busy && this.runner) {
      // Later commands of this process wait for its answer: they share the client's held frames.
      this.queue.track(this.executeHere(this.runner, command, replies).catch((error: unknown) => replies.release(errorFrame(command.id, "internal", errorText(error)))));
      return;
    }
    replies.hold();
    this.queue.push(() => this.route(command, replies).catch((error: unknown) => replies.release(errorFrame(command.id, "internal", errorText(error)))));
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
    this.frames.mirror?.close();
    this.onClose(this);
  }

  /** Reads the frames the channel may have missed (it was down) from the stream. */
  resync(): void {
    this.frames.resync();
  }

  /** The next command of this process for the session, once the one before it is done. */
  private async route(command: Command, replies: CommandReplies): Promise<void> {
    if (this.runner) return this.executeHere(this.runner, command, replies, true);
    if (command.type === "prompt" || command.type === "continue" || command.type === "reset") {
      // Undefined twice only when another process holds the lease; once also when this takeover ended a run past `maxTakeovers`.
      const runner = (await takeLease(this.leaseTaker)) ?? (this.frames.mirror.isRunning ? undefined : await takeLease(this.leaseTaker));
      if (runner) {
        const answered = this.executeHere(runner, command, replies, true);
        // A continue with nothing to do, or a reset, leaves no run: the lease goes back (after the command's confirmation was sent).
        if (!runner.agent.isRunning) runner.release();
        return answered;
      }
    }
    await this.forward(command, replies);
  }

  /**
   * Runs a command on the runner made here; its ack goes out once Redis stored what it wrote
   * (`confirmAck`), else the sender hears that the session moved. Resolves once answered. Until
   * then the sender's frames are held (its `hold`), so the answer still comes before the events
   * the command caused. Its synchronous part runs the command: the caller may release the lease
   * right after it.
   */
  private async executeHere(runner: SessionRunner, command: Command, replies: CommandReplies, held = false): Promise<void> {
    if (command.type === "approve") {
      // An approved call may start its tool at once: a side effect Redis cannot take back. It
      // starts only on a lease Redis has just confirmed, so the tool does not run here for a
      // session another process has taken (where the call waits again for an approval).
      if (!held) replies.hold();
      held = true;
      const holds = await runner.confirmWrites().catch(() => true);
      if (!holds) return replies.release(errorFrame(command.id, "session_moved", sessionMovedText(command.type)));
    }
    const confirmation = confirmAck(runner, command);
    let answer: Promise<ServerFrame> | undefined;
    let holding = held;
    const reply = (frame: ServerFrame): void => {
      if (frame.type !== "ack") return holding ? replies.release(frame) : replies.sendFrame(frame);
      replies.hold();
      answer = confirmation.onAck(frame);
    };
    const hold = (): void => {
      holding = true;
      replies.hold();
    };
    const target: CommandReplies = { sendFrame: reply, hold, release: reply };
    executeCommand(runner.agent, command, target, () => this.resetHere(runner, command.id, target));
    confirmation.done();
    if (answer) replies.release(await answer);
  }

  /** A reset by the runner: the transcript and frames go, a new epoch starts after one more sequence number. */
  private resetHere(runner: SessionRunner, commandId: string, replies: CommandReplies): void {
    const seq = this.frames.mirror.lastSeq + 1;
    const epoch = randomUUID();
    const json = JSON.stringify({ type: "reset", seq, epoch });
    const { keys } = this;
    runner.store.queue?.forget();
    this.context.redis.rxagentResetSession(keys.lease, keys.transcript, keys.events, keys.meta, keys.queue, runner.token, seq, epoch, json, keys.frames).catch((error: unknown) => this.context.warn(`session ${this.id}: could not reset it on Redis: ${errorText(error)}`));
    replies.sendFrame({ type: "ack", id: commandId });
    this.frames.mirror.reset(seq, epoch);
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
      this.executeHere(runner, forwarded.command, replies, true).catch((error: unknown) => replies.release(errorFrame(forwarded.command.id, "internal", errorText(error))));
    };
    // While this process is still opening the Agent it took the lease for, the command waits for it.
    if (!this.runner && this.queue.busy) this.queue.afterCurrent(answer);
    else answer();
  }

  /** The runner made here stopped: its run ended (`lost` false), or Redis refused its frames (`lost` true). */
  private runnerEnded(ended: SessionRunner, lost: boolean): void {
    if (this.runner === ended) {
      this.runner = undefined;
      this.context.unlisten(this.keys.commands);
    } else if (this.runner) {
      // A later run here publishes into the mirror: reading the session again would pull it from under it.
      if (lost) this.context.warn(`session ${this.id}: frames of an earlier run were refused while a later one runs here; its clients may need a snapshot.`);
      return;
    }
    if (lost && !this.closed) this.frames.reload();
  }

  /**
   * The frames show a live run, no process holds the lease: its runner died. This process takes
   * it over: the transcript is reloaded, a run that stopped mid-way (unanswered tool calls, a
   * prompt without a reply) goes on, repaired; otherwise the session is left idle.
   */
  private takeOverIfOrphaned(): void {
    const mirror = this.frames.mirror;
    if (this.closed || this.runner || this.queue.busy || !mirror) return;
    if (mirror.isRunning) return this.queue.track(this.takeOver(takeLease(this.leaseTaker)));
    if (!mirror.endsWithRunEnd || this.settledAt === mirror.lastSeq) return;
    // A taker ends the dead run (`agent_end`) before its continuation's first frame: one that died
    // between the two left frames that say the run ended, the run's start still marked (only a
    // release clears it) and no lease, and no process went on with the prompt (chaos test, seed 7,
    // run 0: a call left without a result). Asked once per last frame, until Redis says it settled.
    const seq = mirror.lastSeq;
    const { redis } = this.context;
    const asked = Promise.all([redis.exists(this.keys.lease), redis.hexists(this.keys.meta, "runSeq")]).then(
      ([leased, started]) => {
        if (leased === 1) return;
        if (started === 0) return void (this.settledAt = seq);
        return this.takeOver(takeLease(this.leaseTaker, true));
      },
      (error: unknown) => this.context.warn(`session ${this.id}: could not read whether its run was left off: ${errorText(error)}`),
    );
    this.queue.track(asked);
  }

  /** Goes on with the run `taking` took over, once it has its runner (none: another process holds the lease, or nothing was left); never rejects. */
  private takeOver(taking: Promise<SessionRunner | undefined>): Promise<void> {
    const takeover = taking.then((runner) => {
      // A run `Agent.open` reopened (calls waiting for approval) goes on by itself.
      if (!runner || runner.agent.isRunning) return;
      try {
        runner.agent.continue();
      } catch {
        // Nothing was left to do (the run had answered): the session is idle again.
        runner.release();
      }
    });
    return takeover.catch((error: unknown) => this.context.warn(`session ${this.id}: could not take over: ${errorText(error)}`));
  }
}
