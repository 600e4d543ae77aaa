import { EventStream } from "@mariozechner/pi-ai";
import { agentLoop as rxagentLoop, agentLoopContinue as rxagentLoopContinue } from "../streams/agent-loop.js";
import type { AgentEvent as RxAgentEvent, AgentMessage as RxAgentMessage } from "../types.js";
import { errorText } from "../errors.js";
import { ListenerChain, type AgentEventSink } from "./listener-chain.js";
import { PolledQueues, toRxagentConfig, toRxagentContext } from "./loop-config.js";
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, StreamFn } from "./types.js";

export type { AgentEventSink } from "./listener-chain.js";

/**
 * Runs the loop from new prompts on rxagent's engine and hands each event to `emit`, awaited in
 * order; resolves with the run's new messages (the prompts first) once `emit` has settled for
 * `agent_end`. Rejects when `emit` throws, or for a config rxagent cannot run.
 */
export function runAgentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): Promise<AgentMessage[]> {
  return runOnRxagent(prompts, context, config, emit, signal, streamFn);
}

/**
 * Runs the loop from the transcript as it stands (a retry). Contract: the transcript is not
 * empty and does not end with an assistant message; it rejects with the reference's error
 * otherwise.
 */
export function runAgentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): Promise<AgentMessage[]> {
  const problem = continueProblem(context);
  if (problem !== undefined) return Promise.reject(new Error(problem));
  return runOnRxagent(undefined, context, config, emit, signal, streamFn);
}

/** `runAgentLoop` as a stream of events whose `result()` is the run's new messages. */
export function agentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]> {
  const stream = agentStream();
  settle(stream, runAgentLoop(prompts, context, config, (event) => stream.push(event), signal, streamFn), config);
  return stream;
}

/**
 * `runAgentLoopContinue` as a stream of events. Contract: throws at once, with the reference's
 * words, for an empty transcript or one that ends with an assistant message.
 */
export function agentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]> {
  const problem = continueProblem(context);
  if (problem !== undefined) throw new Error(problem);
  const stream = agentStream();
  settle(stream, runAgentLoopContinue(context, config, (event) => stream.push(event), signal, streamFn), config);
  return stream;
}

function continueProblem(context: AgentContext): string | undefined {
  const last = context.messages[context.messages.length - 1];
  if (last === undefined) return "Cannot continue: no messages in context";
  if (last.role === "assistant") return "Cannot continue from message role: assistant";
  return undefined;
}

function agentStream(): EventStream<AgentEvent, AgentMessage[]> {
  return new EventStream<AgentEvent, AgentMessage[]>(
    (event) => event.type === "agent_end",
    (event) => (event.type === "agent_end" ? event.messages : []),
  );
}

/**
 * Ends the stream when the run fails instead of leaving a reader waiting forever: with an
 * `agent_end` whose one message is a failed assistant message saying why.
 */
function settle(stream: EventStream<AgentEvent, AgentMessage[]>, run: Promise<AgentMessage[]>, config: AgentLoopConfig): void {
  run.then(
    (messages) => stream.end(messages),
    (error: unknown) => {
      const { model } = config;
      const failed: AgentMessage = {
        role: "assistant",
        content: [],
        api: model.api,
        provider: model.provider,
        model: model.id,
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "error",
        errorMessage: errorText(error),
        // The edge of the library, as pi-ai's own messages: wall-clock time.
        timestamp: Date.now(),
      };
      stream.push({ type: "agent_end", messages: [failed] });
      stream.end([failed]);
    },
  );
}

/**
 * One run on rxagent's loop. The reference polls steering once before the first model call;
 * that poll happens here, before the loop starts, and its messages open the first turn after
 * the prompts, as the reference places them.
 */
async function runOnRxagent(
  prompts: AgentMessage[] | undefined,
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal: AbortSignal | undefined,
  streamFn: StreamFn | undefined,
): Promise<AgentMessage[]> {
  const queues = new PolledQueues(config);
  await queues.pollSteering();
  return new Promise<AgentMessage[]>((resolve, reject) => {
    let newMessages: AgentMessage[] = [];
    let stop = (): void => undefined;
    const listeners = new ListenerChain(emit, (error) => {
      stop();
      reject(error);
    });
    const parts = { context, listeners, queues, signal, streamFn };
    const rxContext = toRxagentContext(context, listeners);
    const rxConfig = toRxagentConfig(config, parts);
    const events$ = prompts === undefined ? rxagentLoopContinue(rxContext, rxConfig) : rxagentLoop(prompts as RxAgentMessage[], rxContext, rxConfig);
    const subscription = events$.subscribe({
      next: (event) => {
        if (event.type === "tool_execution_end" && event.result.terminate === true) queues.terminating.add(event.toolCallId);
        const shaped = referenceEvent(event);
        if (shaped === undefined) return;
        if (shaped.type === "agent_end") newMessages = shaped.messages;
        listeners.push(shaped);
      },
      error: (error: unknown) => reject(error),
      complete: () => listeners.settled().then(() => resolve(newMessages), () => undefined),
    });
    stop = () => subscription.unsubscribe();
  });
}

/**
 * An rxagent event in the reference's shape: `agent_end` without rxagent's additions (`reason`,
 * `usage`, `queued`); the events the reference has no word for (approvals, concurrency slots,
 * which this drop-in never configures) are left out.
 */
function referenceEvent(event: RxAgentEvent): AgentEvent | undefined {
  switch (event.type) {
    case "agent_end":
      return { type: "agent_end", messages: event.messages as AgentMessage[] };
    case "tool_approval_start":
    case "tool_approval_end":
    case "tool_slot_wait_start":
    case "tool_slot_wait_end":
      return undefined;
    default:
      return event as AgentEvent;
  }
}
