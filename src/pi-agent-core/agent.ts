import { streamSimple, type ImageContent, type Message, type SimpleStreamOptions, type ThinkingBudgets, type Transport } from "@mariozechner/pi-ai";
import { errorText } from "../errors.js";
import { MessageQueue } from "../streams/message-queue.js";
import type { QueueMode } from "../types.js";
import { runAgentLoop, runAgentLoopContinue } from "./agent-loop.js";
import { MutableAgentState, type InitialAgentState } from "./agent-state.js";
import type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentState,
  BeforeToolCallContext,
  BeforeToolCallResult,
  StreamFn,
  ToolExecutionMode,
} from "./types.js";

/** Options for constructing an {@link Agent}. */
export interface AgentOptions {
  initialState?: InitialAgentState;
  convertToLlm?: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  streamFn?: StreamFn;
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  onPayload?: SimpleStreamOptions["onPayload"];
  onResponse?: SimpleStreamOptions["onResponse"];
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  sessionId?: string;
  thinkingBudgets?: ThinkingBudgets;
  transport?: Transport;
  maxRetryDelayMs?: number;
  toolExecution?: ToolExecutionMode;
}

type Listener = (event: AgentEvent, signal: AbortSignal) => Promise<void> | void;

/** The run in progress: how to abort it, and a promise that resolves once it is idle again. */
interface ActiveRun {
  controller: AbortController;
  idle: Promise<void>;
}

/** The model messages, for an agent whose caller gives no `convertToLlm`. */
function modelMessagesOnly(messages: AgentMessage[]): Message[] {
  return messages.filter((message) => message.role === "user" || message.role === "assistant" || message.role === "toolResult");
}

/**
 * pi-agent-core's `Agent` on rxagent's loop: it owns the transcript, queues steering and
 * follow-ups, and hands every event to its listeners, awaited in order, with the run's signal.
 * `prompt()` and `continue()` resolve once the listeners of `agent_end` have settled.
 *
 * @example
 * const agent = new Agent({ initialState: { model: getModel("anthropic", "claude-sonnet-4-5") } });
 * agent.subscribe((event) => console.log(event.type));
 * await agent.prompt("Hello");
 */
export class Agent {
  convertToLlm: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  streamFn: StreamFn;
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  onPayload?: SimpleStreamOptions["onPayload"];
  onResponse?: SimpleStreamOptions["onResponse"];
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
  /** Forwarded to the provider, for caches keyed by session. */
  sessionId?: string;
  thinkingBudgets?: ThinkingBudgets;
  transport: Transport;
  maxRetryDelayMs?: number;
  /** How the tool calls of one assistant message run. */
  toolExecution: ToolExecutionMode;
  /** How each queue hands out its messages: one per poll, or all at once. */
  steeringMode: QueueMode;
  followUpMode: QueueMode;

  private readonly mutableState: MutableAgentState;
  private readonly listeners = new Set<Listener>();
  private readonly steeringQueue = new MessageQueue();
  private readonly followUpQueue = new MessageQueue();
  private activeRun: ActiveRun | undefined;

  constructor(options: AgentOptions = {}) {
    this.mutableState = new MutableAgentState(options.initialState);
    this.convertToLlm = options.convertToLlm ?? modelMessagesOnly;
    this.transformContext = options.transformContext;
    this.streamFn = options.streamFn ?? streamSimple;
    this.getApiKey = options.getApiKey;
    this.onPayload = options.onPayload;
    this.onResponse = options.onResponse;
    this.beforeToolCall = options.beforeToolCall;
    this.afterToolCall = options.afterToolCall;
    this.steeringMode = options.steeringMode ?? "one-at-a-time";
    this.followUpMode = options.followUpMode ?? "one-at-a-time";
    this.sessionId = options.sessionId;
    this.thinkingBudgets = options.thinkingBudgets;
    this.transport = options.transport ?? "auto";
    this.maxRetryDelayMs = options.maxRetryDelayMs;
    this.toolExecution = options.toolExecution ?? "parallel";
  }

  /**
   * Adds a listener; the returned function removes it. Listeners are awaited one after another
   * for each event, and a run is idle only once they have settled for its `agent_end`.
   */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get state(): AgentState {
    return this.mutableState;
  }

  /** Queues a message for the next model call of the run in progress (or the next run's first). */
  steer(message: AgentMessage): void {
    this.steeringQueue.push(message);
  }

  /** Queues a message to run once the agent would otherwise stop. */
  followUp(message: AgentMessage): void {
    this.followUpQueue.push(message);
  }

  clearSteeringQueue(): void {
    this.steeringQueue.clear();
  }

  clearFollowUpQueue(): void {
    this.followUpQueue.clear();
  }

  clearAllQueues(): void {
    this.clearSteeringQueue();
    this.clearFollowUpQueue();
  }

  hasQueuedMessages(): boolean {
    return this.steeringQueue.size > 0 || this.followUpQueue.size > 0;
  }

  /** The signal of the run in progress, if any. */
  get signal(): AbortSignal | undefined {
    return this.activeRun?.controller.signal;
  }

  abort(): void {
    this.activeRun?.controller.abort();
  }

  /** Resolves once the run in progress, and its listeners, are done. */
  waitForIdle(): Promise<void> {
    return this.activeRun?.idle ?? Promise.resolve();
  }

  /** Clears the transcript, the run's state and both queues. */
  reset(): void {
    const state = this.mutableState;
    state.messages = [];
    state.isStreaming = false;
    state.streamingMessage = undefined;
    state.pendingToolCalls = new Set();
    state.errorMessage = undefined;
    this.clearAllQueues();
  }

  /** Starts a run from text (with images), one message, or several. */
  prompt(message: AgentMessage | AgentMessage[]): Promise<void>;
  prompt(input: string, images?: ImageContent[]): Promise<void>;
  prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): Promise<void> {
    if (this.activeRun) {
      return Promise.reject(new Error("Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."));
    }
    return this.runPrompts(promptMessages(input, images), false);
  }

  /**
   * Runs on from the transcript. After a user or tool-result message: another model call. After
   * an assistant message: the queued steering (one poll skipped, so one-at-a-time still means
   * one per turn), else the queued follow-ups, else it rejects.
   */
  continue(): Promise<void> {
    if (this.activeRun) return Promise.reject(new Error("Agent is already processing. Wait for completion before continuing."));
    const last = this.mutableState.messages[this.mutableState.messages.length - 1];
    if (last === undefined) return Promise.reject(new Error("No messages to continue from"));
    if (last.role !== "assistant") {
      return this.run((signal, emit) => runAgentLoopContinue(this.contextSnapshot(), this.loopConfig(false), emit, signal, this.streamFn));
    }
    const steering = this.steeringQueue.drain(this.steeringMode);
    if (steering.length > 0) return this.runPrompts(steering as AgentMessage[], true);
    const followUps = this.followUpQueue.drain(this.followUpMode);
    if (followUps.length > 0) return this.runPrompts(followUps as AgentMessage[], false);
    return Promise.reject(new Error("Cannot continue from message role: assistant"));
  }

  private runPrompts(prompts: AgentMessage[], skipFirstSteeringPoll: boolean): Promise<void> {
    return this.run((signal, emit) => runAgentLoop(prompts, this.contextSnapshot(), this.loopConfig(skipFirstSteeringPoll), emit, signal, this.streamFn));
  }

  private contextSnapshot() {
    const { systemPrompt, messages, tools } = this.mutableState;
    return { systemPrompt, messages: messages.slice(), tools: tools.slice() };
  }

  private loopConfig(skipFirstSteeringPoll: boolean): AgentLoopConfig {
    const { model, thinkingLevel } = this.mutableState;
    let skipPoll = skipFirstSteeringPoll;
    return {
      model,
      reasoning: thinkingLevel === "off" ? undefined : thinkingLevel,
      sessionId: this.sessionId,
      onPayload: this.onPayload,
      onResponse: this.onResponse,
      transport: this.transport,
      thinkingBudgets: this.thinkingBudgets,
      maxRetryDelayMs: this.maxRetryDelayMs,
      toolExecution: this.toolExecution,
      beforeToolCall: this.beforeToolCall,
      afterToolCall: this.afterToolCall,
      convertToLlm: this.convertToLlm,
      transformContext: this.transformContext,
      getApiKey: this.getApiKey,
      getSteeringMessages: () => {
        const skipped = skipPoll;
        skipPoll = false;
        return Promise.resolve(skipped ? [] : (this.steeringQueue.drain(this.steeringMode) as AgentMessage[]));
      },
      getFollowUpMessages: () => Promise.resolve(this.followUpQueue.drain(this.followUpMode) as AgentMessage[]),
    };
  }

  /**
   * One run: marks the agent streaming, feeds each event to the state and then the listeners,
   * and turns a run that fails outright (a listener or `streamFn` throwing) into a failed
   * assistant message with its own `agent_end`, as the reference does.
   */
  private async run(start: (signal: AbortSignal, emit: (event: AgentEvent) => Promise<void>) => Promise<unknown>): Promise<void> {
    const controller = new AbortController();
    let markIdle = (): void => undefined;
    const idle = new Promise<void>((resolve) => (markIdle = resolve));
    this.activeRun = { controller, idle };
    const state = this.mutableState;
    state.isStreaming = true;
    state.streamingMessage = undefined;
    state.errorMessage = undefined;
    const emit = (event: AgentEvent): Promise<void> => this.handle(event, controller.signal);
    try {
      await start(controller.signal, emit);
    } catch (error) {
      await this.recordFailure(error, controller.signal.aborted, emit);
    } finally {
      state.isStreaming = false;
      state.streamingMessage = undefined;
      state.pendingToolCalls = new Set();
      this.activeRun = undefined;
      markIdle();
    }
  }

  private async recordFailure(error: unknown, aborted: boolean, emit: (event: AgentEvent) => Promise<void>): Promise<void> {
    const { model } = this.mutableState;
    const failed: AgentMessage = {
      role: "assistant",
      content: [{ type: "text", text: "" }],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: aborted ? "aborted" : "error",
      errorMessage: errorText(error),
      // The edge of the library, as pi-ai's own messages: wall-clock time.
      timestamp: Date.now(),
    };
    this.mutableState.messages.push(failed);
    this.mutableState.errorMessage = failed.errorMessage;
    await emit({ type: "agent_end", messages: [failed] });
  }

  /** Updates the state for one event, then awaits each listener in turn. */
  private async handle(event: AgentEvent, signal: AbortSignal): Promise<void> {
    const state = this.mutableState;
    switch (event.type) {
      case "message_start":
      case "message_update":
        state.streamingMessage = event.message;
        break;
      case "message_end":
        state.streamingMessage = undefined;
        state.messages.push(event.message);
        break;
      case "tool_execution_start":
        state.markToolCall(event.toolCallId, true);
        break;
      case "tool_execution_end":
        state.markToolCall(event.toolCallId, false);
        break;
      case "turn_end":
        if (event.message.role === "assistant" && event.message.errorMessage) state.errorMessage = event.message.errorMessage;
        break;
      case "agent_end":
        state.streamingMessage = undefined;
        break;
    }
    // The live set: a listener removed by an earlier one is not called.
    for (const listener of this.listeners) await listener(event, signal);
  }
}

function promptMessages(input: string | AgentMessage | AgentMessage[], images: ImageContent[] | undefined): AgentMessage[] {
  if (Array.isArray(input)) return input;
  if (typeof input !== "string") return [input];
  const content: (ImageContent | { type: "text"; text: string })[] = [{ type: "text", text: input }];
  if (images !== undefined) content.push(...images);
  // The edge of the library, as pi-ai's own messages: wall-clock time.
  return [{ role: "user", content, timestamp: Date.now() }];
}
