import { catchError, concatMap, defer, from, map, mergeMap, Observable, type Observer, type Subscribable, Subscription, throwError, type Unsubscribable } from "rxjs";
import { HookError, type RxAgentError } from "../errors.js";
import { describe, endingFromPartial, settledModelMessage } from "../model/check-model-message.js";
import { callHook } from "../operators/call-hook.js";
import { type ModelCallHooks, subscribeMessageEvents } from "./to-message-events.js";
import { jsonDepthOf } from "../util/json-depth.js";
import { modelToolsOf } from "../tools/model-tools.js";
import { emptyAssistantMessage, isModelMessage } from "../types/messages.js";
import type { AgentEvent, AgentMessage, AssistantMessage, ConvertMessageToLlm, LlmContext, Message, ModelEvent, ModelStreamOptions, StopReason, ThinkingLevel } from "../types.js";
import { convertEachMessage } from "./transcript/convert-each-message.js";
import { LazyAbortController } from "../util/lazy-abort-controller.js";
import { currentModelMessages, type RunState } from "./run-state.js";

/**
 * One model call: `transformContext`, `convertToLlm`, `model.stream`, mapped to the assistant
 * message's events on `observer`, which then completes; returns the call's teardown. What the
 * observer's handlers throw reaches its `error` (see `subscribeMessageEvents`).
 *
 * The last event is always the assistant's `message_end`, also when a hook throws (or `failure`
 * is given: a hook before the turn or a queue failed), the model
 * fails, or the run is aborted (then no model call is made if it had not begun). The model gets
 * a signal of its own that fires if the call is torn down before the model sent `done` or `error`
 * (abort, unsubscribe, a broken stream).
 *
 * Why a function that subscribes rather than an Observable: it runs once per turn, and a run
 * waiting for its model held the Observable's subscriber, closures and array of finalizers
 * (bench W5, heap per waiting session).
 */
export function streamAssistant(run: RunState, observer: Observer<AgentEvent>, failure?: RxAgentError): Unsubscribable {
  const call = new ModelCall(run);
  const hooked = run.config.transformContext !== undefined || run.config.convertToLlm !== undefined;
  // Without hooks the context is known at once: no hook machinery on the way to the model.
  const model$: Subscribable<ModelEvent> = failure
    ? throwError(() => failure)
    : hooked
      ? llmContextFromHooks(run).pipe(mergeMap((llmContext) => call.stream(llmContext)))
      : call;
  call.subscription = subscribeMessageEvents(model$, run.abort$, call, observer, jsonDepthOf(run.config));
  return call;
}

/**
 * One model call's state: its signal, whether the model finished, and what the message events
 * ask of it. Why one object for all of it (the model's source without hooks, the hooks of
 * `subscribeMessageEvents`, the teardown): a run waiting for its model holds it, and it replaced
 * seven closures, a `defer` and their contexts. Measured against that closure version with
 * bench/ab.ts (medians of 5 rounds in one process, load 9-13, 2026-12-02): heap per waiting
 * session (W5) 3,317 B against 4,384 B; CPU per tool call (W2 value tools, one model call per
 * turn of 8) 0.974x of the class's, within the spread. Why the controller of its own signal
 * rather than holding one: an object fewer a turn, 32 bytes of what a waiting run holds.
 */
class ModelCall extends LazyAbortController implements ModelCallHooks, Subscribable<ModelEvent>, Unsubscribable {
  subscription: Subscription | undefined;
  // Why not "the message ended": on abort the message ends with the request still open.
  private modelFinished = false;

  constructor(private readonly run: RunState) {
    super();
  }

  stream(llmContext: LlmContext): Observable<ModelEvent> {
    const { model, observeModel } = this.run.config;
    return (observeModel ? observeModel(model) : model).stream(llmContext, new ModelCallOptions(this, this.run.config.thinkingLevel));
  }

  /** The model's events without context hooks: the model is called only when subscribed, as `defer` would. */
  subscribe(observer: Partial<Observer<ModelEvent>>): Unsubscribable {
    let events$: Observable<ModelEvent>;
    try {
      events$ = from(this.stream(llmContextOf(this.run, currentModelMessages(this.run))));
    } catch (error) {
      observer.error?.(error);
      return Subscription.EMPTY;
    }
    return events$.subscribe(observer);
  }

  fallback(partial: AssistantMessage | undefined, stopReason: Extract<StopReason, "error" | "aborted">, errorMessage: string): AssistantMessage {
    return endingFromPartial(partial ?? emptyAssistantMessage(this.run.config.model, this.run.scheduler.now()), { stopReason, errorMessage });
  }

  modelEnded(): void {
    this.modelFinished = true;
  }

  settle(message: AssistantMessage): AssistantMessage {
    return settledModelMessage(message, this.run);
  }

  abortModel(): void {
    this.abort(this.run.config.signal?.reason ?? new Error("Request was aborted"));
  }

  unsubscribe(): void {
    this.subscription?.unsubscribe();
    if (!this.modelFinished) this.abort(new Error("The model call was cancelled"));
  }
}

/**
 * The options a model call gets: its signal, made when first read, as an own enumerable getter
 * (a provider may spread its options), and the run's thinking level when it has one. Why made per call and not kept: only a provider that
 * keeps them holds them while it streams. Why a class that defines one shared getter, not an
 * object literal with a getter: V8 gives each such literal a dictionary of its own, about
 * 500 bytes and 1 µs to make, where these share one shape and take about 0.2 µs (Node 20).
 */
class ModelCallOptions implements ModelStreamOptions {
  declare readonly signal: AbortSignal;
  declare readonly thinkingLevel?: ThinkingLevel;
  readonly #controller: LazyAbortController;

  constructor(controller: LazyAbortController, thinkingLevel: ThinkingLevel | undefined) {
    this.#controller = controller;
    Object.defineProperty(this, "signal", SIGNAL_PROPERTY);
    // Only when set: a model told nothing thinks as it was configured, and `"thinkingLevel" in options` says so.
    if (thinkingLevel !== undefined) (this as { thinkingLevel?: ThinkingLevel }).thinkingLevel = thinkingLevel;
  }

  static signalOf(options: ModelCallOptions): AbortSignal {
    return options.#controller.signal;
  }
}

const SIGNAL_PROPERTY: PropertyDescriptor = {
  get(this: ModelCallOptions): AbortSignal {
    return ModelCallOptions.signalOf(this);
  },
  enumerable: true,
};

function llmContextFromHooks(run: RunState): Observable<LlmContext> {
  const { config } = run;
  const messages$ = config.transformContext
    ? callHook(config.transformContext, [...run.context.messages], run.cancellation.signal).pipe(
        map((messages) => arrayAnswer("transformContext", messages)),
        catchError((error: unknown) => throwError(() => asHookError("transformContext", error))),
      )
    : defer(() => [run.context.messages]);
  return messages$.pipe(
    concatMap((messages) =>
      (config.convertToLlm ? callHook(config.convertToLlm, messages) : defer(() => [convertWithoutHook(messages, config.convertMessageToLlm)])).pipe(
        map((llmMessages) => arrayAnswer("convertToLlm", llmMessages)),
        catchError((error: unknown) => throwError(() => asHookError("convertToLlm", error))),
      ),
    ),
    map((messages: Message[]) => llmContextOf(run, messages)),
  );
}

/** `transformContext`'s answer as model messages: converted message by message, or filtered. */
function convertWithoutHook(messages: AgentMessage[], convert: ConvertMessageToLlm | undefined): Message[] {
  if (convert === undefined) return messages.filter(isModelMessage);
  const converted: Message[] = [];
  convertEachMessage(messages, 0, convert, converted);
  return converted;
}

/** A hook's answer that must be an array of messages; anything else is that hook's failure. */
function arrayAnswer<T>(hookName: string, answer: T[]): T[] {
  if (!Array.isArray(answer)) throw new HookError(hookName, `it returned ${answer === undefined ? "undefined" : describe(answer)}, not an array of messages`);
  return answer;
}

function asHookError(hookName: string, error: unknown): HookError {
  return error instanceof HookError ? error : new HookError(hookName, error);
}

function llmContextOf(run: RunState, messages: readonly Message[]): LlmContext {
  const llmContext: LlmContext = { messages };
  if (run.context.systemPrompt !== undefined) llmContext.systemPrompt = run.context.systemPrompt;
  if (run.context.tools && run.context.tools.length > 0) llmContext.tools = modelToolsOf(run.context.tools);
  return llmContext;
}
