import { catchError, map, type Observable, of, race, take } from "rxjs";
import { HookError } from "../errors.js";
import { describe } from "../model/check-model-message.js";
import { callHook } from "../operators/call-hook.js";
import type { AgentMessage, PrepareNextTurnResult } from "../types.js";
import { newMessages, type RunState } from "./run-state.js";
import { tooDeepMessage } from "./check-config.js";
import { jsonDepthOf } from "../util/json-depth.js";

/**
 * Asks `prepareNextTurn` before a next turn (`prepareFirstTurn` before the first) and applies
 * its answer to the run.
 *
 * Emits once, then completes: the messages the answer asks to append (`append`; none when there
 * is no answer, or the run aborted meanwhile: the turn then ends at once as aborted) when the turn
 * may start, or the `HookError` the turn's model call must end with (a throw, or an answer that
 * is not an update).
 */
export function prepareNextTurn(run: RunState): Observable<HookError | readonly AgentMessage[]> {
  const lastTurn = run.lastTurn!;
  const context = { message: lastTurn.message, toolResults: lastTurn.toolResults, context: run.context, newMessages: newMessages(run) };
  return prepared(run, "prepareNextTurn", callHook(run.config.prepareNextTurn!, context));
}

/** `prepareNextTurn`'s counterpart before a run's first model call: it sees the context and the run's prompts. */
export function prepareFirstTurn(run: RunState): Observable<HookError | readonly AgentMessage[]> {
  return prepared(run, "prepareFirstTurn", callHook(run.config.prepareFirstTurn!, { context: run.context, newMessages: newMessages(run) }));
}

/** The hook's answer applied to the run, raced against an abort. */
function prepared(run: RunState, hookName: string, answer$: Observable<PrepareNextTurnResult | undefined>): Observable<HookError | readonly AgentMessage[]> {
  return race(
    answer$.pipe(
      map((update) => {
        const problem = applyTurnUpdate(run, update);
        return problem === undefined ? (update?.append ?? NOTHING) : new HookError(hookName, problem);
      }),
      catchError((error: unknown) => of(new HookError(hookName, error))),
    ),
    run.abort$.pipe(map(() => NOTHING)),
  ).pipe(take(1));
}

const NOTHING: readonly AgentMessage[] = [];

/**
 * Applies an update to the run: context fields that are given replace the run's, and a model
 * replaces the config's. Returns why the update cannot be used (one reason: a message nested
 * deeper than `maxJsonDepth`), changing nothing then.
 *
 * Messages in another array replace the transcript: what the run added so far is carried for
 * `agent_end`, and the default `convertToLlm`'s cache starts over.
 */
export function applyTurnUpdate(run: RunState, update: PrepareNextTurnResult | undefined): string | undefined {
  if (update === undefined || update === null) return undefined;
  if (typeof update !== "object" || Array.isArray(update)) return `it returned ${describe(update)}, not { context, model }`;
  const { context, model, append } = update;
  if (context !== undefined && (typeof context !== "object" || context === null || !Array.isArray(context.messages))) {
    return "its context has no messages array";
  }
  if (model !== undefined && (typeof model !== "object" || model === null || typeof model.stream !== "function")) {
    return "its model has no stream function";
  }
  const appendProblem = append === undefined ? undefined : problemOfAppend(append, jsonDepthOf(run.config));
  if (appendProblem !== undefined) return appendProblem;
  // A new transcript reaches every client and store: one nested too deep would overflow their stacks.
  const tooDeep = context === undefined || context.messages === run.context.messages ? undefined : tooDeepMessage(context.messages, jsonDepthOf(run.config));
  if (tooDeep !== undefined) return `its context.messages${tooDeep}`;
  if (context) {
    const target = run.context;
    if (context.systemPrompt === undefined) delete target.systemPrompt;
    else target.systemPrompt = context.systemPrompt;
    if (context.tools === undefined) delete target.tools;
    else target.tools = context.tools;
    if (context.messages !== target.messages) {
      run.carriedNewMessages = newMessages(run);
      // A copy: the run appends to its transcript, and the caller's array must not change.
      target.messages = [...context.messages];
      run.firstNewMessage = target.messages.length;
      run.converted = undefined;
      run.modelMessagesSeen = 0;
      run.lent = undefined;
    }
  }
  if (model) run.config = { ...run.config, model };
  return undefined;
}

/** Why `append` cannot go into the transcript: not an array of messages, or one nested too deep. */
function problemOfAppend(append: unknown, maxJsonDepth: number): string | undefined {
  if (!Array.isArray(append)) return `its append is ${describe(append)}, not an array of messages`;
  const index = append.findIndex((message: unknown) => typeof message !== "object" || message === null || typeof (message as { role?: unknown }).role !== "string");
  if (index !== -1) return `its append[${index}] is ${describe(append[index])}, not a message with a role`;
  const tooDeep = tooDeepMessage(append, maxJsonDepth);
  return tooDeep === undefined ? undefined : `its append${tooDeep}`;
}
