import { catchError, concatMap, defer, finalize, map, mergeMap, Observable, tap, throwError } from "rxjs";
import { HookError } from "../errors.js";
import { callHook } from "../operators/call-hook.js";
import { toMessageEvents } from "../operators/to-message-events.js";
import { emptyUsage, isModelMessage } from "../types/messages.js";
import type { AgentEvent, AgentMessage, AssistantMessage, LlmContext, Message } from "../types.js";
import type { RunState } from "./run-state.js";

/**
 * One model call: `transformContext`, `convertToLlm`, `model.stream`, mapped to the assistant
 * message's events.
 *
 * The last event is always the assistant's `message_end`, also when a hook throws, the model
 * fails, or the run is aborted (then no model call is made if it had not begun). The model gets
 * a signal of its own that fires if the call is torn down before the model sent `done` or `error`
 * (abort, unsubscribe, a broken stream).
 */
export function streamAssistant(run: RunState): Observable<AgentEvent> {
  return defer(() => {
    const controller = new AbortController();
    // Why not "the message ended": on abort the message ends with the request still open.
    let modelFinished = false;
    const { config } = run;
    const messages$ = config.transformContext
      ? callHook(config.transformContext, [...run.context.messages], run.signal).pipe(
          catchError((error: unknown) => throwError(() => new HookError("transformContext", error))),
        )
      : defer(() => [run.context.messages]);
    const llmMessages$ = messages$.pipe(
      concatMap((messages) =>
        (config.convertToLlm ? callHook(config.convertToLlm, messages) : defer(() => [keepModelMessages(messages)])).pipe(
          catchError((error: unknown) => throwError(() => new HookError("convertToLlm", error))),
        ),
      ),
    );
    return llmMessages$.pipe(
      map((messages): LlmContext => {
        const llmContext: LlmContext = { messages };
        if (run.context.systemPrompt !== undefined) llmContext.systemPrompt = run.context.systemPrompt;
        if (run.context.tools && run.context.tools.length > 0) llmContext.tools = run.context.tools;
        return llmContext;
      }),
      mergeMap((llmContext) =>
        config.model.stream(llmContext, { signal: controller.signal }).pipe(
          tap((event) => {
            if (event.type === "done" || event.type === "error") modelFinished = true;
          }),
        ),
      ),
      toMessageEvents(run.abort$, (partial, stopReason, errorMessage) => ({
        ...(partial ?? emptyAssistant(run)),
        stopReason,
        errorMessage,
      })),
      finalize(() => {
        if (!modelFinished) controller.abort(new Error("The model call was cancelled"));
      }),
    );
  });
}

function keepModelMessages(messages: AgentMessage[]): Message[] {
  return messages.filter(isModelMessage);
}

function emptyAssistant(run: RunState): AssistantMessage {
  const { model } = run.config;
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: "error",
    timestamp: run.scheduler.now(),
  };
}
