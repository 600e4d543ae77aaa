import { randomUUID } from "node:crypto";
import { errorText } from "../errors.js";
import type { Agent } from "../agent/agent.js";
import type { RedisSessionContext } from "./redis-session-context.js";
import { RedisTranscriptStore } from "./redis-transcript-store.js";
import type { SessionFrames } from "./session-frames.js";
import type { SessionKeys } from "./session-keys.js";
import { SessionRunner, transcriptLostText } from "./session-runner.js";
import { problemOfAgent } from "../agent/problem-of-agent.js";

/** What watching clients read in `agent_end.errorMessage` when a process takes over a run whose runner died. */
export const TAKEOVER_TEXT = "The process running this session stopped before the run ended; another process took the session over.";

/** What clients read in `agent_end.errorMessage` when a run was taken over too often without progress (`maxTakeovers`). */
export function takeoverLimitText(takeovers: number): string {
  return `The run was taken over ${takeovers} times without saving anything new to the transcript (each process running it stopped at the same point); it ended as failed instead of being continued again.`;
}

/** The session, as `takeLease` sees it: where its frames are, and where the runner it makes goes. */
export interface LeaseTaker {
  readonly context: RedisSessionContext;
  readonly id: string;
  readonly keys: SessionKeys;
  readonly frames: SessionFrames;
  /** A command another process forwarded: only the runner listens for them. */
  receiveCommand(message: string): void;
  /** The runner made here, told before it publishes anything. */
  adopt(runner: SessionRunner): void;
  /** The runner stopped (`SessionRunner`'s `onEnd`). */
  runnerEnded(runner: SessionRunner, lost: boolean): void;
}

/**
 * Takes the lease and makes the session's runner, or undefined when another process holds it.
 * A run the frames show as live has lost its runner: it is closed with an `agent_end` saying so
 * before anything else runs. With `leftOff`, the caller found the frames ended and the run's
 * start still marked with no lease: a taker died between ending the dead run and its
 * continuation's first frame. Such a run is taken over without a second `agent_end`; when the
 * mark is gone by now (its runner released it), the lease goes back and undefined is returned.
 */
export async function takeLease(session: LeaseTaker, leftOff = false): Promise<SessionRunner | undefined> {
  const { context, keys, frames } = session;
  const { redis, leaseMs, processId } = context;
  const token = `${processId}:${randomUUID()}`;
  if ((await redis.set(keys.lease, token, "PX", leaseMs, "NX")) !== "OK") return undefined;
  let takeovers = 0;
  let orphaned = false;
  let queued: string[];
  try {
    // Only the runner listens for commands: a command no process receives has no runner to answer it.
    await context.listen(keys.commands, (message) => session.receiveCommand(message));
    // Frames of the previous runner may still be on their way through the channel: the stream has them all.
    await frames.readStream();
    orphaned = frames.mirror.isRunning || (leftOff && (await redis.hexists(keys.meta, "runSeq")) === 1);
    if (leftOff && !orphaned) {
      context.unlisten(keys.commands);
      await redis.rxagentReleaseLease(keys.lease, keys.meta, keys.queue, token, 0, 0, keys.frames);
      return undefined;
    }
    // Counted before a runner exists: a takeover that Redis fails here (it restarts) leaves only a
    // lease that expires, and a later one starts again. A runner made first kept renewing the
    // lease of a run it never started, and the session was wedged for as long as the process lived.
    if (orphaned) takeovers = await redis.rxagentCountTakeover(keys.lease, keys.meta, token);
    // Steers and follow-ups a runner took that its run never turned into messages: final now, as only a lease holder writes them.
    queued = await redis.lrange(keys.queue, 0, -1);
  } catch (error) {
    context.unlisten(keys.commands);
    throw error;
  }
  let runner: SessionRunner | undefined;
  const store = new RedisTranscriptStore(redis, session.id, {
    keyPrefix: context.keyPrefix,
    fenceToken: token,
    ...context.saveBounds,
    onFailure: (error) => runner?.transcriptFailed(error),
    onWarning: (text) => context.warn(text),
  });
  let agent: Agent;
  try {
    agent = await context.createAgent(session.id, store);
    const problem = problemOfAgent(agent);
    if (problem !== undefined) throw new TypeError(`it returned ${problem}.`);
  } catch (error) {
    context.unlisten(keys.commands);
    await redis.rxagentReleaseLease(keys.lease, keys.meta, keys.queue, token, 0, 0, keys.frames);
    throw new Error(`createAgent failed: ${errorText(error)}`, { cause: error });
  }
  requeue(agent, store, queued, context.warn);
  runner = new SessionRunner(context, keys, frames.mirror, agent, store, token, (ended, lost) => session.runnerEnded(ended, lost));
  session.adopt(runner);
  if (orphaned) {
    announceUnframedMessages(runner, frames);
    // A run left off after its end was told needs no second one.
    if (frames.mirror.isRunning) runner.publish({ type: "agent_end", messages: [], reason: "failed", errorMessage: TAKEOVER_TEXT });
    if (takeovers === -1) {
      // Its runner could not save every message: going on would tell the model a story with holes.
      runner.publish({ type: "agent_end", messages: [], reason: "failed", errorMessage: transcriptLostText("messages of this run never reached it") });
      runner.release();
      return undefined;
    }
    if (takeovers > context.maxTakeovers) {
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
function announceUnframedMessages(runner: SessionRunner, frames: SessionFrames): void {
  for (const message of runner.agent.state.messages.slice(frames.mirror.messages.length)) {
    runner.publish({ type: "message_start", message });
    runner.publish({ type: "message_end", message });
  }
}

/**
 * Queues on the new agent, in their order and kind, the messages the session's queue holds: a
 * steer goes in before the run's next model call, a follow-up once it would stop; a takeover's
 * `continue` of a run that had answered takes them at once (as `Agent.continue` does), a new
 * prompt's run on its way. The run's transcript append of each removes it from Redis; what the
 * agent cannot queue is removed now (`SessionQueue.restore`).
 */
function requeue(agent: Agent, store: RedisTranscriptStore, elements: readonly string[], warn: (message: string) => void): void {
  const restored = store.queue?.restore(elements, (kind, message) => (kind === "steer" ? agent.steer(message) : agent.followUp(message)), warn);
  // A refusal means the lease is gone: the runner learns that from its next write.
  restored?.catch((error: unknown) => warn(`${store.key}: could not update the session's queue on Redis: ${errorText(error)}`));
}
