import { asyncScheduler, type SchedulerLike } from "rxjs";
import type { AgentContext, AgentLoopConfig, AgentMessage, AgentTool, OutputSchema, QueueMode, TranscriptStore } from "../types.js";
import { withFields } from "../util/with-field.js";
import type { ActiveRun } from "./active-run.js";
import type { AgentQueues } from "./agent-queues.js";
import { QueueView } from "./queue-view.js";
import type { RunReplay } from "./run-replay.js";

export interface AgentOptions<TOutputSchema extends OutputSchema = OutputSchema> extends Omit<AgentLoopConfig, "steering" | "followUp" | "signal" | "output" | "cancellations" | "approvals"> {
  /** A structured final answer for every run, in `agent_end.output` (see `AgentLoopConfig.output`). */
  output?: TOutputSchema;
  systemPrompt?: string;
  tools?: AgentTool[];
  /** The transcript to start from. */
  messages?: AgentMessage[];
  /** Every message that ends is appended here. */
  store?: TranscriptStore;
  /** Told about problems that must not stop the agent, e.g. a store that failed to write. */
  onWarning?: (message: string) => void;
  /**
   * What a run's Observable (`prompt`, `continue`, `currentRun$`) replays to a subscriber that
   * comes after the run began. `"full"` (the default): every event. `"compact"`: every event
   * except the `message_update`s of messages that have ended and the `tool_execution_update`s
   * (sub-agent events included) of calls that have ended, so a streamed run does not keep a
   * partial message per delta until it ends. Subscribers that are there already, `events$` and
   * `subscribe` listeners get every event either way. A change applies from the next run.
   *
   * Contract: with `"compact"` a late subscriber still gets every other event in order, the
   * updates of the message and calls still open, and the run's end.
   * @example new Agent({ model, tools, runReplay: "compact" }) // a server that follows `events$` only
   */
  runReplay?: RunReplay;
}

/**
 * The loop config of one run of an `Agent`: its options less what the agent keeps for itself
 * (transcript, store, warnings) or gives the context (system prompt, tools: `runContext`), its
 * queue modes as they are now, and the run's own signal, cancellations and approvals.
 *
 * The queues are reached through views (queue-view.ts): `existing` gives the agent's queues if
 * they were made, `made` makes them. Why: a run that only drains must not make them, as most
 * agents are never steered (agent-queues.ts).
 */
export function runConfig(
  options: AgentOptions,
  run: Pick<ActiveRun<unknown>, "controller" | "cancellations" | "approvals">,
  modes: { steeringMode: QueueMode; followUpMode: QueueMode },
  existing: () => AgentQueues | undefined,
  made: () => AgentQueues,
  skipFirstSteeringDrain = false,
): AgentLoopConfig {
  const { messages: _messages, store: _store, onWarning: _onWarning, runReplay: _runReplay, systemPrompt: _systemPrompt, tools: _tools, ...loopOptions } = options;
  // Not a spread: every run's config had a hidden class of its own (withFields).
  return withFields(loopOptions, {
    steering: new QueueView(() => existing()?.existingSteering, () => made().steeringQueue, skipFirstSteeringDrain),
    followUp: new QueueView(() => existing()?.existingFollowUp, () => made().followUpQueue),
    steeringMode: modes.steeringMode,
    followUpMode: modes.followUpMode,
    signal: run.controller.signal,
    cancellations: run.cancellations,
    approvals: run.approvals,
  });
}

/** The context a run of an `Agent` starts from: its transcript, system prompt and tools. */
export function runContext(options: AgentOptions, messages: readonly AgentMessage[]): AgentContext {
  // No copy: the run works on the agent's transcript itself (lent to it, checked-transcripts.ts)
  // or on a copy of its own, and never changes the agent's array.
  const context: AgentContext = { messages: messages as AgentMessage[] };
  if (options.systemPrompt !== undefined) context.systemPrompt = options.systemPrompt;
  if (options.tools !== undefined) context.tools = options.tools;
  return context;
}

/** The clock of an `Agent`'s runs and of its own timestamps: `options.scheduler`, else rxjs's `asyncScheduler`. */
export function schedulerOf(options: AgentOptions): SchedulerLike {
  return options.scheduler ?? asyncScheduler;
}
