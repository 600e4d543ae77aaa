import { catchError, concatMap, defer, map, mergeMap, Observable, throwError } from "rxjs";
import { HookError, type RxAgentError } from "../errors.js";
import { describe } from "../model/check-model-message.js";
import { callHook } from "../operators/call-hook.js";
import { toMessageEvents } from "../operators/to-message-events.js";
import { modelToolsOf } from "../tools/model-tools.js";
import { emptyAssistantMessage, isModelMessage } from "../types/messages.js";
import type { AgentEvent, AgentMessage, ConvertMessageToLlm, LlmContext, Message, ModelStreamOptions } from "../types.js";
import { convertEachMessage } from "./convert-each-message.js";
import { LazyAbortController } from "./lazy-abort-controller.js";
import { currentModelMessages, type RunState } from "./run-state.js";

/**
 * One model call: `transformContext`, `convertToLlm`, `model.stream`, mapped to the assistant
 * message's events.
 *
 * The last event is always the assistant's `message_end`, also when a hook throws (or `failure`
 * is given: a hook before the turn or a queue failed), the model
 * fails, or the run is aborted (then no model call is made if it had not begun). The model gets
 * a signal of its own that fires if the call is torn down before the model sent `done` or `error`
 * (abort, unsubscribe, a broken stream).
 */
export function streamAssistant(run: RunState, failure?: RxAgentError): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    const call = new LazyAbortController();
    // Why not "the message ended": on abort the message ends with the request still open.
    let modelFinished = false;
    const options: ModelStreamOptions = {
      get signal() {
        return call.signal;
      },
    };
    const modelEvents = (llmContext: LlmContext) => run.config.model.stream(llmContext, options);
    const hooked = run.config.transformContext !== undefined || run.config.convertToLlm !== undefined;
    // Without hooks the context is known at once: no hook machinery on the way to the model.
    const model$ = failure
      ? throwError(() => failure)
      : hooked
        ? llmContextFromHooks(run).pipe(mergeMap(modelEvents))
        : defer(() => modelEvents(llmContextOf(run, currentModelMessages(run))));
    const subscription = model$
      .pipe(
        toMessageEvents(
          run.abort$,
          (partial, stopReason, errorMessage) => ({ ...(partial ?? emptyAssistantMessage(run.config.model, run.scheduler.now())), stopReason, errorMessage }),
          () => (modelFinished = true),
          () => call.abort(run.config.signal?.reason ?? new Error("Request was aborted")),
        ),
      )
      .subscribe(subscriber);
    return () => {
      subscription.unsubscribe();
      if (!modelFinished) call.abort(new Error("The model call was cancelled"));
    };
  });
}

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
