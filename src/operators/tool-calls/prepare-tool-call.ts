import { catchError, concatMap, map, Observable, of, race, type Subscription } from "rxjs";
import { errorText } from "../../errors.js";
import { errorResult } from "../../tools/tool-results.js";
import { type ArgumentValidation, validateArguments } from "../../tools/validate-arguments.js";
import { jsonDepthOf } from "../../util/json-depth.js";
import { synchronousAnswer } from "../../util/synchronous-answer.js";
import type { AgentEvent, AgentTool, AgentToolResult, BeforeToolCallResult, ToolCall } from "../../types.js";
import { answerOfHook } from "./answer-of-hook.js";
import { forwardingObserver } from "../forwarding-observer.js";
import { Trampoline } from "../trampoline.js";
import { ABORTED_TOOL_TEXT, FinalizedToolCall, PreparedToolCall, type ToolBatch } from "./tool-batch.js";

/**
 * Announces one tool call and readies it to run.
 *
 * Emits `tool_execution_start`, then either a `PreparedToolCall` (tool found, arguments
 * prepared and valid, `beforeToolCall` allowed it) or a `FinalizedToolCall` holding the error
 * result that explains why the call will not run. If the batch is interrupted meanwhile (abort,
 * steering), `beforeToolCall` is dropped and the call is finalized as skipped. Everything up to
 * a `beforeToolCall` that answers with a Promise or an Observable happens synchronously, on
 * subscribe.
 */
export function prepareToolCall(
  index: number,
  toolCall: ToolCall,
  batch: ToolBatch,
): Observable<AgentEvent | PreparedToolCall | FinalizedToolCall> {
  return new Observable<AgentEvent | PreparedToolCall | FinalizedToolCall>((subscriber) => {
    subscriber.next({ type: "tool_execution_start", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments });
    if (subscriber.closed) return undefined;
    const outcome = readyToolCall(index, toolCall, batch);
    if (outcome instanceof Observable) return outcome.subscribe(subscriber);
    subscriber.next(outcome);
    subscriber.complete();
    return undefined;
  });
}

/**
 * Announces and readies a batch's calls one after the other, in source order: emits each call's
 * `tool_execution_start`, then the call itself, prepared to run (a `PreparedToolCall`) or
 * finalized during preparation (a `FinalizedToolCall`: an error result, a block, a skip).
 *
 * The next call starts when the one before is ready. Why not `concatMap(prepareToolCall)`:
 * nearly every preparation is synchronous, and this one subscription serves the whole batch;
 * only a `beforeToolCall` that answers with a Promise or an Observable is subscribed to, and
 * waited for.
 *
 * With `more` (eager execution), `toolCalls` grows while the batch runs: `more` emits after calls
 * were appended, and completes once no more will come; only then does the Observable complete.
 */
export function prepareToolCalls(toolCalls: ToolCall[], batch: ToolBatch, more?: Observable<void>): Observable<PreparationOutput> {
  return new Observable<PreparationOutput>((subscriber) => {
    let nextIndex = 0;
    let waiting: Subscription | undefined;
    // A call's preparation (its `beforeToolCall`, or an asynchronous validation) not answered yet.
    let answerPending = false;
    // With `more` (eager execution): calls still to come are appended to `toolCalls`.
    let moreDone = more === undefined;
    // An answer that arrives synchronously goes on in this loop rather than on the stack.
    const preparation = {
      loop: (): void => {
        while (!answerPending && nextIndex < toolCalls.length && !subscriber.closed) {
          const index = nextIndex++;
          const toolCall = toolCalls[index]!;
          subscriber.next({ type: "tool_execution_start", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments });
          if (subscriber.closed) return;
          const outcome = readyToolCall(index, toolCall, batch);
          if (!(outcome instanceof Observable)) {
            subscriber.next(outcome);
            continue;
          }
          answerPending = true;
          waiting = outcome.subscribe(
            forwardingObserver(subscriber, {
              next: (ready: Readiness) => subscriber.next(ready),
              complete: () => {
                answerPending = false;
                trampoline.run();
              },
            }),
          );
        }
        if (moreDone && !answerPending && nextIndex === toolCalls.length) subscriber.complete();
      },
    };
    const trampoline = new Trampoline(preparation);
    // More calls, or the end of them: the loop goes on if it waits for nothing else.
    const moreSubscription = more?.subscribe(
      forwardingObserver(subscriber, {
        next: () => trampoline.run(),
        complete: () => {
          moreDone = true;
          trampoline.run();
        },
      }),
    );
    trampoline.run();
    return () => {
      waiting?.unsubscribe();
      moreSubscription?.unsubscribe();
    };
  });
}

/** What preparing calls emits: events, calls ready to run, calls finalized before running. */
export type PreparationOutput = AgentEvent | PreparedToolCall | FinalizedToolCall;

type Readiness = PreparedToolCall | FinalizedToolCall;

function readyToolCall(index: number, toolCall: ToolCall, batch: ToolBatch): Readiness | Observable<Readiness> {
  // Why check the run's cancellation here: a subscriber that leaves as it hears
  // `tool_execution_start` tears the run down, but a batch subscribed to synchronously is not
  // linked to the run's subscription yet, so its preparation loop goes on. A cancelled run
  // (abort, or torn down) means no hook or tool code may run any more.
  if (batch.cancellation.aborted) return failedCall(index, toolCall, ABORTED_TOOL_TEXT, true);
  const interruptedBefore = batch.interruption.reason;
  if (interruptedBefore !== undefined) return failedCall(index, toolCall, interruptedBefore, true);
  const cancelled = batch.cancellations?.messageFor(toolCall.id);
  if (cancelled !== undefined) return failedCall(index, toolCall, cancelled, true);
  const tool = batch.context.tools?.find((candidate) => candidate.name === toolCall.name);
  if (!tool) return failedCall(index, toolCall, toolNotFoundText(toolCall.name, batch.context.tools ?? []));
  let rawArguments: unknown = toolCall.rawArguments ?? toolCall.arguments;
  if (tool.prepareArguments) {
    try {
      rawArguments = synchronousAnswer(tool.prepareArguments(rawArguments));
    } catch (error) {
      return failedCall(index, toolCall, `prepareArguments failed for tool "${toolCall.name}": ${errorText(error)}`);
    }
  }
  let validation: ReturnType<typeof validateArguments>;
  try {
    validation = validateArguments(toolCall.name, tool.parameters, rawArguments, jsonDepthOf(batch.config));
  } catch (error) {
    // A validator that throws (a Standard Schema's own code, a JSON Schema whose check recurses
    // without end, as an MCP server's `{ "$ref": "#" }` does) fails this call, not the run.
    return failedCall(index, toolCall, validationFailedText(toolCall.name, error));
  }
  if (!(validation instanceof Observable)) return validatedCall(index, toolCall, batch, tool, validation);
  // Only a Standard Schema that validates asynchronously gets here; an interruption wins as for hooks.
  return race(
    batch.interruption.reason$.pipe(map((reason) => failedCall(index, toolCall, reason, true))),
    validation.pipe(
      concatMap((settled) => {
        const outcome = validatedCall(index, toolCall, batch, tool, settled);
        return outcome instanceof Observable ? outcome : of(outcome);
      }),
      catchError((error: unknown) => of(failedCall(index, toolCall, validationFailedText(toolCall.name, error)))),
    ),
  );
}

function validatedCall(
  index: number,
  toolCall: ToolCall,
  batch: ToolBatch,
  tool: AgentTool,
  validation: ArgumentValidation,
): Readiness | Observable<Readiness> {
  if (!validation.valid) return failedCall(index, toolCall, validation.message);
  const prepared = new PreparedToolCall(index, toolCall, tool, validation.value);
  const beforeToolCall = batch.config.beforeToolCall;
  if (!beforeToolCall) return prepared;
  return answerOfHook(
    () => beforeToolCall({ assistantMessage: batch.assistantMessage, toolCall, args: validation.value, context: batch.context }, batch.cancellation.signal),
    {
      answered: (decision: BeforeToolCallResult | undefined): Readiness => readinessOfDecision(decision, index, toolCall, prepared),
      failed: (error) => failedCall(index, toolCall, `beforeToolCall failed for tool "${toolCall.name}": ${errorText(error)}`),
      interrupted: (reason) => failedCall(index, toolCall, reason, true),
    },
    batch.interruption,
    batch.cancellations?.message$(toolCall.id),
  );
}

/**
 * The call as `beforeToolCall`'s decision leaves it: ready, or blocked with the hook's reason. A
 * reason that is not a text (an Error, a number) is written as one: the result's text must be a
 * string for every provider and client. A decision that cannot be read (a getter or a Proxy that
 * throws) fails the call, which then does not run: the hook may have meant to block it.
 */
function readinessOfDecision(decision: BeforeToolCallResult | undefined, index: number, toolCall: ToolCall, prepared: PreparedToolCall): Readiness {
  let reason: unknown;
  let terminate: unknown;
  try {
    if (!decision?.block) return prepared;
    reason = decision.reason;
    terminate = decision.terminate;
  } catch (error) {
    return failedCall(index, toolCall, `beforeToolCall failed for tool "${toolCall.name}": its answer could not be read: ${errorText(error)}`);
  }
  const text = reason === undefined || reason === "" ? "Tool execution was blocked" : typeof reason === "string" ? reason : errorText(reason);
  const result: AgentToolResult = errorResult(text);
  if (terminate === true) result.terminate = true;
  return new FinalizedToolCall(index, toolCall, result, true);
}

/** How many tool names a not-found answer lists: enough for any hand-made set, bounded for a large MCP catalogue. */
const listedToolNames = 30;

/**
 * "Tool X not found" (pi-agent-core's wording) followed by the names the model can call, so a
 * misspelt name ("wether") is corrected on the next turn rather than guessed again.
 */
function toolNotFoundText(name: string, tools: readonly AgentTool[]): string {
  // A call the model sent without a name has "" (settledModelMessage).
  const notFound = name === "" ? "The call names no tool" : `Tool ${name} not found`;
  if (tools.length === 0) return `${notFound}: no tools are available.`;
  const names = tools.slice(0, listedToolNames).map((tool) => tool.name);
  const more = tools.length > listedToolNames ? ` and ${tools.length - listedToolNames} more` : "";
  return `${notFound}. Available tools: ${names.join(", ")}${more}.`;
}

function failedCall(index: number, toolCall: ToolCall, message: string, interrupted = false): FinalizedToolCall {
  return new FinalizedToolCall(index, toolCall, errorResult(message), true, interrupted);
}

function validationFailedText(toolName: string, error: unknown): string {
  return `Validating the arguments of tool "${toolName}" failed: ${errorText(error)}`;
}
