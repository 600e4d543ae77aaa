import { streamSimple, type Api, type AssistantMessageEventStream, type Context, type Model as PiAiModel } from "@mariozechner/pi-ai";
import { fromPiAi } from "../pi-ai/from-pi-ai.js";
import { MessageQueue } from "../streams/message-queue.js";
import type {
  AgentContext as RxAgentContext,
  AgentLoopConfig as RxAgentLoopConfig,
  AgentMessage as RxAgentMessage,
  AgentTool as RxAgentTool,
  ShouldStopAfterTurnContext as RxShouldStopAfterTurnContext,
} from "../types.js";
import type { ListenerChain } from "./listener-chain.js";
import type { AgentContext, AgentLoopConfig, AgentMessage, AgentTool, ShouldStopAfterTurnContext, StreamFn } from "./types.js";

/**
 * What the reference's async queue getters gave, held for rxagent's loop to drain.
 *
 * Why: rxagent drains its queues synchronously when a turn ends; the reference polls async
 * getters (`getSteeringMessages`, `getFollowUpMessages`) at that moment. The polls happen in
 * `shouldStopAfterTurn`, which rxagent awaits just before it drains, and land here. The getters
 * already apply their own one-at-a-time or all mode, so rxagent drains everything ("all").
 */
export class PolledQueues {
  readonly steering = new MessageQueue();
  readonly followUp = new MessageQueue();
  /** Ids of the calls whose final result asked to terminate. */
  readonly terminating = new Set<string>();

  constructor(private readonly config: AgentLoopConfig) {}

  /** Polls steering into the queue; true when it gave any. */
  async pollSteering(): Promise<boolean> {
    const messages = (await this.config.getSteeringMessages?.()) ?? [];
    for (const message of messages) this.steering.push(message as RxAgentMessage);
    return messages.length > 0;
  }

  /**
   * After a turn, in the reference's order: `shouldStopAfterTurn`, then steering, then, only
   * when the run would otherwise stop (no steering, no tool results to answer), follow-ups.
   */
  async afterTurn(turn: RxShouldStopAfterTurnContext, context: AgentContext): Promise<boolean> {
    const stop = await this.config.shouldStopAfterTurn?.({ ...turn, context: referenceContext(turn.context, context) } as ShouldStopAfterTurnContext);
    if (stop === true) return true;
    const steered = await this.pollSteering();
    const moreToolWork = turn.toolResults.length > 0 && !turn.toolResults.every((result) => this.terminating.has(result.toolCallId));
    if (!steered && !moreToolWork) {
      const followUps = (await this.config.getFollowUpMessages?.()) ?? [];
      for (const message of followUps) this.followUp.push(message as RxAgentMessage);
    }
    return false;
  }
}

/** The loop's live context as a hook of the reference sees it: the transcript so far, the caller's own tools. */
function referenceContext(live: RxAgentContext, start: AgentContext): AgentContext {
  const context: AgentContext = { systemPrompt: start.systemPrompt, messages: live.messages as AgentMessage[] };
  if (start.tools !== undefined) context.tools = start.tools;
  return context;
}

/** What a run's config is made from besides the reference's config. */
export interface LoopParts {
  context: AgentContext;
  listeners: ListenerChain;
  queues: PolledQueues;
  signal: AbortSignal | undefined;
  streamFn: StreamFn | undefined;
}

/**
 * The reference's loop config as rxagent's: its `streamFn` (pi-ai's `streamSimple` by default)
 * behind `fromPiAi`, its tools and hooks adapted, its queues polled (`PolledQueues`), and every
 * step that the reference takes only after its listeners settled waiting for them too.
 */
export function toRxagentConfig(config: AgentLoopConfig, parts: LoopParts): RxAgentLoopConfig {
  const { listeners, queues } = parts;
  const rxConfig: RxAgentLoopConfig = {
    model: fromPiAi(config.model, { stream: openStream(config, parts.streamFn ?? streamSimple) }),
    convertToLlm: (messages) => config.convertToLlm(messages as AgentMessage[]) as ReturnType<NonNullable<RxAgentLoopConfig["convertToLlm"]>>,
    // Before each model call: the listeners of everything so far have settled (they may have
    // replaced a message in place), then the caller's transform.
    transformContext: (messages, signal) =>
      listeners
        .settled()
        .then(() => (config.transformContext ? config.transformContext(messages as AgentMessage[], signal) : (messages as AgentMessage[])))
        .then((transformed) => transformed as RxAgentMessage[]),
    shouldStopAfterTurn: (turn) => listeners.settled().then(() => queues.afterTurn(turn, parts.context)),
    steering: queues.steering,
    followUp: queues.followUp,
    steeringMode: "all",
    followUpMode: "all",
    toolExecution: config.toolExecution ?? "parallel",
  };
  if (parts.signal !== undefined) rxConfig.signal = parts.signal;
  const { beforeToolCall, afterToolCall } = config;
  if (beforeToolCall) {
    rxConfig.beforeToolCall = (hookContext, signal) =>
      listeners.settled().then(() => beforeToolCall({ ...hookContext, context: referenceContext(hookContext.context, parts.context) } as Parameters<typeof beforeToolCall>[0], signal));
  }
  if (afterToolCall) {
    rxConfig.afterToolCall = (hookContext, signal) =>
      afterToolCall({ ...hookContext, context: referenceContext(hookContext.context, parts.context) } as Parameters<typeof afterToolCall>[0], signal);
  }
  return rxConfig;
}

/**
 * The model call as the reference makes it: the key looked up for the call, the whole loop
 * config spread into `streamFn`'s options (pi's own `streamFn` reads `reasoning`, `sessionId`,
 * `transport`, ...), the run's signal, and the tools as the caller gave them.
 */
function openStream(config: AgentLoopConfig, streamFn: StreamFn) {
  return (model: PiAiModel<Api>, context: Context, options: { signal?: AbortSignal }): Promise<AssistantMessageEventStream> =>
    Promise.resolve(config.getApiKey?.(config.model.provider)).then((key) => {
      const apiKey = key || config.apiKey;
      const streamOptions = { ...config, apiKey, signal: options.signal };
      return streamFn(model, { ...context, systemPrompt: context.systemPrompt ?? "" }, streamOptions);
    });
}

/** The reference's tool as rxagent's: the same fields, `execute` called with a signal and an update callback. */
export function toRxagentTool(tool: AgentTool, listeners: ListenerChain): RxAgentTool {
  return {
    ...(tool as unknown as RxAgentTool),
    // The reference announces a call (tool_execution_start) and waits for its listeners first.
    execute: (toolCallId, args, { signal, update }) =>
      listeners.settled().then(() => tool.execute(toolCallId, args as never, signal, (partial) => update(partial))),
  };
}

/** The context rxagent's loop starts from. */
export function toRxagentContext(context: AgentContext, listeners: ListenerChain): RxAgentContext {
  const rxContext: RxAgentContext = { systemPrompt: context.systemPrompt, messages: context.messages as RxAgentMessage[] };
  if (context.tools !== undefined) rxContext.tools = context.tools.map((tool) => toRxagentTool(tool, listeners));
  return rxContext;
}
