import type { MonoTypeOperatorFunction, Observable, SchedulerLike } from "rxjs";
import type { AgentEvent } from "./events.js";
import type { AgentMessage, AssistantMessage, ImageContent, Message, TextContent, ToolCall, Usage } from "./messages.js";
import type { Model, ThinkingLevel } from "./model.js";
import type { OutputSchema } from "./output.js";
import type { AgentToolResult, ToolExecuteResult, ToolExecutionMode } from "./tools.js";
import type { AgentContext } from "./agent-context.js";
import type { PrepareFirstTurnContext, PrepareNextTurnContext, PrepareNextTurnResult, ShouldStopAfterTurnContext, StopCondition } from "./turn-hooks.js";

export type { AgentContext } from "./agent-context.js";
export type { AgentLoopTurnUpdate, PrepareFirstTurnContext, PrepareNextTurnContext, PrepareNextTurnResult, ShouldStopAfterTurnContext, StopCondition, StopConditionContext } from "./turn-hooks.js";

/**
 * What a hook may return. A plain value is used synchronously (so a scripted run stays
 * deterministic in virtual time); a Promise or an Observable (its last value) is waited for.
 */
export type HookResult<T> = T | PromiseLike<T> | Observable<T>;

/**
 * What `convertMessageToLlm` makes of one transcript message: one model message, several, or
 * `undefined` (or `[]`) to leave it out of the model's context.
 */
export type ConvertMessageToLlm = (message: AgentMessage) => Message | readonly Message[] | undefined;

/** How many queued messages one drain takes. */
export type QueueMode = "one-at-a-time" | "all";

/**
 * A queue the loop drains at its own moments. `MessageQueue` implements it; pass one to keep
 * ownership of what is queued (the `Agent` does), or pass an Observable and the loop queues.
 */
export interface DrainableQueue {
  /** Removes and returns the next messages (one, or all, per mode). */
  drain(mode: QueueMode): AgentMessage[];
  /** What is queued now, without removing it. */
  peek(): readonly AgentMessage[];
  /** Emits each message as it is queued. */
  readonly arrivals: Observable<AgentMessage>;
}

/** A request to cancel one tool call of the run (`AgentLoopConfig.cancellations`). */
export interface ToolCallCancellation {
  toolCallId: string;
  /** Why; the call's error result says it. */
  reason?: string;
}

/** A person's decision on a call waiting for approval: approve or deny (`AgentLoopConfig.approvals`). */
export interface ApprovalDecision {
  toolCallId: string;
  approved: boolean;
  /** With a denial: why; the call's error result says it. */
  reason?: string;
}

/** @deprecated use `ApprovalDecision` (renamed so it is not mistaken for `needsApproval`'s result). */
export type ToolCallDecision = ApprovalDecision;

export interface BeforeToolCallResult {
  /** Prevents the call; it gets an error result with `reason`. */
  block?: boolean;
  reason?: string;
  /**
   * With `block`: the blocked call counts as terminating, so a batch whose every result
   * terminates ends the run after it.
   */
  terminate?: boolean;
}

/** Field-by-field override of an executed result; omitted fields keep their value. */
export interface AfterToolCallResult {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  isError?: boolean;
  terminate?: boolean;
  /** Replaces the result's `usage` (tokens and cost the tool spent). */
  usage?: Usage;
}

export interface BeforeToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: ToolCall;
  /** The validated (and coerced) arguments. */
  args: unknown;
  /** The run's context as the run holds it: read it, do not change it (an `Agent`'s run holds the Agent's own transcript). */
  context: AgentContext;
}

export interface AfterToolCallContext extends BeforeToolCallContext {
  result: AgentToolResult;
  isError: boolean;
}


export interface AgentLoopConfig {
  model: Model;
  /**
   * How hard the model thinks on each call of the run, handed to it as
   * `ModelStreamOptions.thinkingLevel` (pi-agent-core's `reasoning`). Default: unset, and the
   * model thinks as it was configured.
   *
   * Contract: one of `"off"`, `"minimal"`, `"low"`, `"medium"`, `"high"`, `"xhigh"`; anything
   * else is an `InvalidConfigError` before the run starts.
   * @example thinkingLevel: "high"
   */
  thinkingLevel?: ThinkingLevel;
  /**
   * Turns transcript messages into model messages before each call.
   *
   * Contract: return only user / assistant / toolResult messages. Default: keeps those three
   * roles and drops app-defined ones. A throw ends the turn with an error assistant message.
   * @example convertToLlm: (messages) => messages.filter((message) => message.role !== "notice")
   */
  convertToLlm?: (messages: AgentMessage[]) => HookResult<Message[]>;
  /**
   * Turns one transcript message into model messages, once per message: the answer is cached
   * by message identity (for this function, across turns and across an `Agent`'s runs), so a
   * long session's turns cost the same however long the transcript grows, where `convertToLlm`
   * runs over the whole transcript every turn. Used instead of `convertToLlm`; giving both is
   * an `InvalidConfigError`. With `transformContext`, it converts that hook's answer (cached
   * messages are not converted again).
   *
   * Contract: synchronous and pure: return the model message(s) for `message`, or `undefined`
   * to leave it out. A message is converted again only as a new object: replace a message to
   * change it (a rewrite by `prepareNextTurn` or `transformContext` that returns new objects
   * is converted anew); changing a message object in place is not seen. A throw, a Promise, or
   * an answer that is not a user / assistant / toolResult message, ends the turn with an error
   * assistant message (`convertMessageToLlm failed: …`).
   * @example convertMessageToLlm: (message) => (message.role === "notice" ? { role: "user", content: message.text, timestamp: message.timestamp } : message)
   */
  convertMessageToLlm?: ConvertMessageToLlm;
  /**
   * Prunes, compacts or injects transcript messages before `convertToLlm`, on every call.
   *
   * Contract: return the messages to use; the transcript itself is not changed.
   * @example transformContext: (messages) => messages.slice(-40)
   */
  transformContext?: (messages: AgentMessage[], signal: AbortSignal) => HookResult<AgentMessage[]>;
  /**
   * Asked after every `turn_end`; `true` ends the run there.
   *
   * Contract: a throw also ends the run (the safe choice).
   * @example shouldStopAfterTurn: ({ newMessages }) => newMessages.length > 100
   */
  shouldStopAfterTurn?: (context: ShouldStopAfterTurnContext) => HookResult<boolean>;
  /**
   * Called before each next turn of the run (not the first), after `turn_end` and
   * `shouldStopAfterTurn`, before that turn's `turn_start`; it may take time (e.g. compaction).
   *
   * Contract: return `{ context, model }` (either may be omitted) to change what the next turn
   * and those after it use, or nothing to keep things as they are. A throw, or an answer that
   * is not such an object, ends the run with an error assistant message
   * (`prepareNextTurn failed: …`). Aborting while it is pending ends the run at once.
   * @example prepareNextTurn: ({ context }) => ({ context: { ...context, messages: compact(context.messages) } })
   */
  prepareNextTurn?: (context: PrepareNextTurnContext) => HookResult<PrepareNextTurnResult | undefined>;
  /**
   * Called once per run before its first model call, after the prompts' `message_end`; it may
   * take time. `prepareNextTurn` covers the turns after it: a run of one turn (a chat without
   * tools) asks only this one, e.g. `compaction` checks a session a new prompt would take past
   * its budget here.
   *
   * Contract: as `prepareNextTurn`'s: `{ context, model, append }` (any may be omitted) changes
   * the run from its first call on, nothing keeps it as it is; `append`ed messages follow the
   * prompts. A throw or an answer that is not such an object ends the run with an error
   * assistant message (`prepareFirstTurn failed: …`). Aborting while it is pending ends the run at once.
   * @example prepareFirstTurn: ({ context }) => (context.messages.length > 200 ? { model: longContextModel } : undefined)
   */
  prepareFirstTurn?: (context: PrepareFirstTurnContext) => HookResult<PrepareNextTurnResult | undefined>;
  /** Ends the run after this many turns. */
  maxTurns?: number;
  /**
   * Ends the run after a turn when a condition holds: one condition, or an array of them (any one
   * stops the run; the first that holds, in array order, is the one reported).
   *
   * Contract: synchronous predicates, asked after every `turn_end` (after the checks for a
   * failure, an abort and `maxTurns`, before `shouldStopAfterTurn`, which is not asked once one
   * stops). `agent_end.reason` is `"stop_condition"` and `agent_end.stopCondition` names the
   * condition. A throw ends the run as `"failed"`, with `errorMessage` naming the condition.
   * @example stopWhen: [stepCountIs(5), hasToolCall("answer"), usageExceeds({ cost: 0.5 })]
   */
  stopWhen?: StopCondition | readonly StopCondition[];
  /**
   * Messages typed while the agent works, injected before the next model call.
   *
   * Contract: the loop subscribes for its lifetime; nothing pushed is lost (what is still
   * queued at the end is reported in `agent_end.queued`).
   * @example steering: steeringSubject
   */
  steering?: Observable<AgentMessage> | DrainableQueue;
  /**
   * Messages to handle once the agent would stop; each drain starts another inner loop.
   * @example followUp: followUpSubject
   */
  followUp?: Observable<AgentMessage> | DrainableQueue;
  /** Default `"one-at-a-time"`. */
  steeringMode?: QueueMode;
  /** Default `"one-at-a-time"`. */
  followUpMode?: QueueMode;
  /** Default `"parallel"`. A tool with `executionMode: "sequential"` makes its batch sequential. */
  toolExecution?: ToolExecutionMode;
  /** Most tool calls running at once. Default: unbounded. */
  maxConcurrency?: number;
  /**
   * How many levels of arrays and objects the run accepts in JSON from outside: a model's
   * tool-call arguments, a tool's result (`content`, `details`, progress reports) and an
   * `afterToolCall` override. Default 128 (`MAX_JSON_DEPTH`); at most 1000.
   *
   * Contract: arguments deeper than this reach no tool and no hook: the call gets an error
   * result the model reads ("arguments nest deeper than N levels"), and the transcript keeps
   * `arguments: {}` with the model's text in `rawArguments`. A result or override deeper than
   * this becomes an error result naming N. Never a throw. Why at most 1000: JSON.stringify,
   * `structuredClone` and TypeBox recurse, and overflow the stack between 2,000 and 10,000 levels.
   * @example maxJsonDepth: 64
   */
  maxJsonDepth?: number;
  /**
   * Every tool is eager unless it says `eager: false`: a call starts as soon as the model has
   * finished its arguments (`toolcall_end`), while the message still streams. Default `false`:
   * only tools with `eager: true` start early.
   *
   * Contract: preparation, validation, `beforeToolCall`, `maxConcurrency`, tool `concurrency`
   * and the order of the results are as without it; `beforeToolCall` of an early call sees the
   * message as of the call's `toolcall_end` (`assistantMessage` is that partial message, and
   * `context.messages` does not hold it yet). An early call's `tool_execution_*` events come
   * after the message's `message_end`. A message that then ends with `stopReason` `"error"`,
   * `"aborted"` or `"length"` fires the early calls' signals and keeps the results the message
   * gets without eager execution (none for error/aborted, the token-limit error result for
   * each call for length). With `toolExecution: "sequential"`, nothing starts early.
   * @example eagerTools: true
   */
  eagerTools?: boolean;
  /**
   * Steering that arrives during a tool batch aborts running tools and skips the rest. Default
   * `false`: steering waits for the batch.
   */
  steeringInterruptsTools?: boolean;
  /**
   * Asked before each tool runs, one call at a time in source order (it may wait for a person).
   *
   * Contract: `{ block: true, reason }` prevents the call (its error result says `reason`, written
   * as text when it is not a string; `terminate: true` makes it count as terminating); a throw,
   * or an answer that cannot be read, becomes an error result and the call does not run.
   * @example beforeToolCall: ({ toolCall }) => toolCall.name === "rm" ? { block: true, reason: "no" } : undefined
   */
  beforeToolCall?: (
    context: BeforeToolCallContext,
    signal: AbortSignal,
  ) => HookResult<BeforeToolCallResult | undefined>;
  /**
   * Asked after each tool ran; may override its result.
   *
   * Contract: a throw, or an answer that is not an override (content that is not an array of
   * text or image parts, an `isError` or `terminate` that is not a boolean, a `usage` that is
   * not an object), turns the result into an error result saying so.
   * @example afterToolCall: ({ result }) => ({ details: { audited: true } })
   */
  afterToolCall?: (
    context: AfterToolCallContext,
    signal: AbortSignal,
  ) => HookResult<AfterToolCallResult | undefined>;
  /**
   * Asks for a structured final answer: the model gets a `final_answer` tool with this schema
   * as its parameters, the run ends once a call's arguments validate, and `agent_end.output`
   * holds them (typed from the schema).
   *
   * Contract: an object schema; no other tool may have the final-answer tool's name. Invalid arguments go
   * back to the model as an error result; a reply without the call gets a reminder message. Each
   * counts as a miss; after `outputRetries` misses more, the run ends with `agent_end.outputError`.
   * @example output: Type.Object({ city: Type.String(), temperature: Type.Number() })
   */
  output?: OutputSchema;
  /** With `output`: how many misses the model may correct before the run gives up. Default 2. */
  outputRetries?: number;
  /**
   * With `output`: the final-answer tool's name (default `final_answer`) and description.
   * @example outputTool: { name: "submit_report", description: "Submits the finished report." }
   */
  outputTool?: { name?: string; description?: string };
  /**
   * How long a tool call may run, loop-wide, in milliseconds. Default 180000 (3 minutes, as in the
   * reference); `0` disables the loop-wide timer.
   *
   * Contract: a call running longer has its signal fired and gets the error result
   * `Tool "<name>" timed out after N seconds. …`. A tool's own `timeoutMs` wins over this; a
   * call's own `timeout` argument in seconds (only when the tool's schema declares one) wins
   * over both, and `timeout: 0` disables the timer for that call. The timer is armed only for
   * calls that did not settle synchronously.
   * @example toolTimeoutMs: 30_000
   */
  toolTimeoutMs?: number;
  /**
   * Cancels single tool calls while the others of the batch and the turn go on.
   *
   * Contract: each batch subscribes once while it runs (so emit on a hot source, or replay:
   * a cancel emitted while no batch listens is lost); an id that is not a call of the batch,
   * or a call already finished, is ignored. A running call's signal fires and it gets the
   * error result `Tool call was cancelled[: reason].`, unless it settles with its own result
   * while its signal fires; a call not started yet (waiting for `beforeToolCall` or for a
   * concurrency slot) gets that result at once and never runs. A source that errors only
   * stops bringing cancels.
   * @example cancellations: cancelSubject // cancelSubject.next({ toolCallId, reason: "too slow" })
   */
  cancellations?: Observable<ToolCallCancellation>;
  /**
   * Answers to calls waiting for approval (tools with `needsApproval`).
   *
   * Contract: a batch with such a tool subscribes once while it runs; an answer for a call that
   * is not waiting yet is kept until it waits, one for an unknown or finished call is ignored.
   * Abort, a cancel (`cancellations`) and `approvalTimeoutMs` end a wait too, as a denial. A
   * source that errors only stops bringing answers.
   * @example approvals: decisions // decisions.next({ toolCallId, approved: false, reason: "not on prod" })
   */
  approvals?: Observable<ApprovalDecision>;
  /**
   * How long a call may wait for approval, in milliseconds; then it is denied with
   * `Tool call was denied: no answer within N ms`. Default: no limit.
   * @example approvalTimeoutMs: 600_000
   */
  approvalTimeoutMs?: number;
  /** Aborting ends the run gracefully: `stopReason: "aborted"`, a result for every tool call. */
  signal?: AbortSignal;
  /** Source of time (timestamps, timeouts). Default: `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /**
   * An operator each run's events go through, subscribed in the run's place: the seam for
   * instrumentation (`rxagent/otel`'s `withTelemetry` sets it to open a span per run and keep it
   * the active context while the run works).
   *
   * Contract: pass every event on, unchanged and in order; unsubscribing from it ends the run.
   * @example observeRun: tap((event) => log(event.type))
   */
  observeRun?: MonoTypeOperatorFunction<AgentEvent>;
  /**
   * The model each call of the run uses, passed through this first: the seam for
   * instrumentation that sees every model, the config's and one that `prepareNextTurn` or
   * `Agent.configure` swapped in (`withTelemetry` gives each call its `chat` span here).
   *
   * Contract: return a model that streams as the given one does; called once per model call.
   * @example observeModel: (model) => ({ ...model, stream: (context, options) => model.stream(context, options).pipe(tap(log)) })
   */
  observeModel?: (model: Model) => Model;
  /**
   * Each tool call's `execute`, run through this: the seam for instrumentation that sees every
   * tool, whether it came in `Agent` options, the loop's context or a `prepareNextTurn` answer
   * (`withTelemetry` runs the call with its `execute_tool` span as the active context).
   *
   * Contract: call `execute` once, at once, and return what it returns (or an Observable of the
   * same values, e.g. one that subscribes to it in a context of one's own); a throw is the
   * tool's failure.
   * @example observeToolCall: (toolCall, execute) => { log(toolCall.name); return execute(); }
   */
  observeToolCall?: (toolCall: ToolCall, execute: () => ToolExecuteResult) => ToolExecuteResult;
}
