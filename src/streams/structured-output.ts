import { asyncScheduler, isObservable, map, Observable } from "rxjs";
import { finalAnswerTool } from "../tools/final-answer-tool.js";
import { toolCallsOf } from "../types/messages.js";
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, DrainableQueue, QueueMode, ShouldStopAfterTurnContext } from "../types.js";
import { withField, withFields } from "../util/with-field.js";
import { MessageQueue, noMessages } from "./message-queue.js";

/** Runs the loop on a context and a config. */
export type LoopRunner = (context: AgentContext, config: AgentLoopConfig) => Observable<AgentEvent>;

/** What a reply without the final-answer call gets before the next turn. */
export function finalAnswerReminder(toolName: string): string {
  return `Give your final answer by calling the ${toolName} tool; a reply in text is not taken as the answer.`;
}

/**
 * Runs a loop that must end with a structured final answer (`config.output`), built on the
 * loop's own parts: the final-answer tool (`final_answer` unless `outputTool` names it) joins the context's tools, `shouldStopAfterTurn`
 * ends the run after the turn in which a call's arguments validated, and the follow-up queue
 * carries a reminder after a reply in text. `agent_end` gets `output` (the validated arguments)
 * or `outputError`. Without `output` it is the plain loop.
 *
 * Why a reminder message and not a forced tool choice: forcing a tool is provider-specific (and
 * not possible with reasoning on some), while a user message works with every model that can
 * call tools. Each reply in text and each turn with only invalid calls is a miss; after
 * `outputRetries` misses more the run ends with `outputError`.
 *
 * Contract: throws a `TypeError` at once for a non-object schema, a tool that already has the
 * final-answer tool's name or a negative `outputRetries`.
 */
export function withOutput(context: AgentContext, config: AgentLoopConfig, runLoop: LoopRunner): Observable<AgentEvent> {
  if (config.output === undefined) return runLoop(context, config);
  const tool = finalAnswerTool(config.output, config.outputTool);
  if (context.tools?.some((existing) => existing.name === tool.name)) {
    throw new TypeError(`A tool is already named "${tool.name}"; with output, that name is the final answer's. Rename one (outputTool.name).`);
  }
  const retries = config.outputRetries ?? 2;
  if (!Number.isInteger(retries) || retries < 0) throw new TypeError(`outputRetries must be a whole number of at least 0, not ${retries}.`);
  const tools = [...(context.tools ?? []), tool];
  return new Observable<AgentEvent>((subscriber) => {
    const attempts = new OutputAttempts(tool.name, retries);
    const scheduler = config.scheduler ?? asyncScheduler;
    // A follow-up Observable is queued here, since the loop sees only the wrapping queue.
    const ownQueue = isObservable(config.followUp) ? new MessageQueue() : undefined;
    const feed = ownQueue && isObservable(config.followUp) ? config.followUp.subscribe({ next: (message) => ownQueue.push(message), error: () => undefined }) : undefined;
    const followUps: DrainableQueue = ownQueue ?? (isObservable(config.followUp) ? noMessages : (config.followUp ?? noMessages));
    const userHook = config.shouldStopAfterTurn;
    // Not spreads: withFields.
    const loopConfig: AgentLoopConfig = withFields(config, {
      followUp: {
        drain: (mode: QueueMode) => (attempts.takeReminder() ? [reminder(tool.name, scheduler.now())] : followUps.drain(mode)),
        peek: () => followUps.peek(),
        arrivals: followUps.arrivals,
      },
      shouldStopAfterTurn: (turn: ShouldStopAfterTurnContext) => attempts.afterTurn(turn) || (userHook ? userHook(turn) : false),
    });
    const subscription = runLoop(withField(context, "tools", tools), loopConfig)
      .pipe(map((event) => (event.type === "agent_end" ? attempts.end(event, ownQueue) : event)))
      .subscribe(subscriber);
    return () => {
      feed?.unsubscribe();
      subscription.unsubscribe();
    };
  });
}

/** One run's tries at a final answer. */
class OutputAttempts {
  private output: { value: unknown } | undefined;
  private misses = 0;
  private problem: string | undefined;
  private remind = false;

  constructor(
    private readonly toolName: string,
    private readonly retries: number,
  ) {}

  /** Reads a turn; true ends the run: a valid answer came, or the misses ran out. */
  afterTurn({ message, toolResults }: ShouldStopAfterTurnContext): boolean {
    const answers = toolResults.filter((result) => result.toolName === this.toolName);
    const valid = answers.filter((result) => !result.isError).at(-1);
    if (valid) {
      this.output = { value: valid.details };
      return true;
    }
    const repliedInText = toolCallsOf(message).length === 0;
    if (answers.length === 0 && !repliedInText) return false;
    this.misses++;
    this.problem = repliedInText
      ? `the model replied in text without calling ${this.toolName}`
      : answers.map((result) => result.content.map((part) => (part.type === "text" ? part.text : "")).join("")).join("\n");
    if (this.misses > this.retries) return true;
    this.remind = repliedInText;
    return false;
  }

  /** True once per reminder due. */
  takeReminder(): boolean {
    const due = this.remind;
    this.remind = false;
    return due;
  }

  /** `agent_end` with the output or why there is none (and what is still queued in our own queue). */
  end(event: Extract<AgentEvent, { type: "agent_end" }>, ownQueue: MessageQueue | undefined): AgentEvent {
    const ended: Extract<AgentEvent, { type: "agent_end" }> = { ...event };
    // The wrapper's own shouldStopAfterTurn ended the run: say why in the words a user logs.
    const stoppedHere = event.reason === "stopped_by_hook";
    if (this.output) {
      ended.output = this.output.value;
      if (stoppedHere) ended.reason = "terminated";
    } else if (this.misses > this.retries) {
      ended.outputError = `No valid final answer after ${this.misses} attempts; the last: ${this.problem}`;
      if (stoppedHere) ended.reason = "failed";
    } else {
      ended.outputError = `The run ended before a valid final answer${this.problem ? ` (the last attempt: ${this.problem})` : ""}.`;
    }
    if (ownQueue && ownQueue.size > 0) ended.queued = { steering: event.queued?.steering ?? [], followUp: [...ownQueue.peek()] };
    return ended;
  }
}

function reminder(toolName: string, timestamp: number): AgentMessage {
  return { role: "user", content: finalAnswerReminder(toolName), timestamp };
}
