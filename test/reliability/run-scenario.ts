/**
 * Runs a `Scenario` in virtual time and records everything the invariants look at: the events,
 * what each tool body saw (start, end, its signal), the model calls and their signals, hook
 * calls, the messages pushed, and what happened after an unsubscribe.
 */
import { Type } from "@sinclair/typebox";
import { concat, map, Observable, Subject, take, timer, type SchedulerLike, type Subscription } from "rxjs";
import { TestScheduler } from "rxjs/testing";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { scriptedModel, type ScriptedBlock, type ScriptedReply } from "../../src/testing/scripted-model.js";
import type {
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentTool,
  AgentToolResult,
  HookResult,
  Model,
  UserMessage,
} from "../../src/types.js";
import { TOOL_TIMEOUT_MS, type HookPlan, type Scenario, type ToolCallPlan, type TurnPlan } from "./scenario.js";

/** What one tool body saw. */
export interface ToolBodyRecord {
  toolCallId: string;
  toolName: string;
  signal: AbortSignal;
  /** The body ended on its own (value, error or completion) rather than being torn down. */
  finished: boolean;
  /** The body was unsubscribed (torn down by the loop). */
  tornDown: boolean;
}

/** What one model call saw. */
export interface ModelCallRecord {
  signal: AbortSignal;
  /** Subscribed and not yet at `done`/`error`/completion. */
  open: boolean;
}

/** Counters that must not move once the subscriber has left. */
export interface ActivityCounters {
  events: number;
  toolExecutes: number;
  modelCalls: number;
  hookCalls: number;
}

export interface ScenarioRun {
  events: AgentEvent[];
  prompt: UserMessage;
  tools: ToolBodyRecord[];
  modelCalls: ModelCallRecord[];
  /** Most tool bodies running at once, overall and per tool name. */
  maxRunning: number;
  maxRunningByTool: Map<string, number>;
  /** Steering and follow-up messages pushed while the run was subscribed and not ended. */
  pushedSteering: AgentMessage[];
  pushedFollowUps: AgentMessage[];
  completed: boolean;
  error: unknown;
  aborted: boolean;
  unsubscribed: boolean;
  /** Counters at the moment of the abort, of the unsubscribe, and at the very end. */
  atAbort: ActivityCounters | undefined;
  atUnsubscribe: ActivityCounters | undefined;
  atEnd: ActivityCounters;
}

/** The scenario's tool call blocks for one turn; arguments carry the plan to the tool body. */
function toolCallBlocks(turn: TurnPlan): ScriptedBlock[] {
  return turn.calls.map((call) => ({
    type: "toolCall",
    name: call.outcome === "unknown-tool" ? "missing_tool" : call.tool,
    arguments: {
      latency: call.outcome === "invalid-args" ? "not a number" : call.outcome === "timeout" ? TOOL_TIMEOUT_MS + 5 + call.latency : call.latency,
      outcome: call.outcome,
      updates: call.updates,
      terminate: call.terminate,
    },
  }));
}

function replyFor(turn: TurnPlan | undefined, callIndex: number): ScriptedReply {
  if (turn === undefined) return { content: [{ type: "text", text: `plain reply ${callIndex}` }] };
  const content: ScriptedBlock[] = [{ type: "text", text: `turn ${callIndex}` }, ...toolCallBlocks(turn)];
  switch (turn.failure) {
    case "error-reply":
      return { content, stopReason: "error", errorMessage: "scripted provider error" };
    case "observable-error":
      return { content, failure: { kind: "observable-error", error: new Error("socket closed") } };
    case "complete-early":
      return { content, failure: { kind: "complete-early" } };
    default:
      return { content };
  }
}

/** Calls a planned hook (its `call`-th call, from 1): answers with `value` at once or later, or throws. */
function planned<T>(plan: HookPlan, call: number, scheduler: SchedulerLike, value: () => T): HookResult<T> {
  if (plan.kind === "throw" && call % plan.every === 0) throw new Error(`hook failed on call ${call}`);
  if (plan.kind === "delayed") return timer(plan.delay, scheduler).pipe(map(value));
  return value();
}

export interface RunOptions {
  /**
   * Aborts, or unsubscribes (through `take`), from inside the observer as the event with this
   * index is emitted: the most re-entrant moment there is.
   */
  stopAtEvent?: { kind: "abort" | "unsubscribe"; index: number };
}

/**
 * Runs the scenario to the end of virtual time. Each call makes a fresh `TestScheduler`.
 */
export function runScenario(scenario: Scenario, options: RunOptions = {}): ScenarioRun {
  const scheduler = new TestScheduler(() => undefined);
  let result: ScenarioRun | undefined;
  scheduler.run(() => {
    result = startScenario(scenario, scheduler, options);
  });
  return result!;
}

function startScenario(scenario: Scenario, scheduler: SchedulerLike, options: RunOptions): ScenarioRun {
  const prompt: UserMessage = { role: "user", content: "start", timestamp: 0 };
  const run: ScenarioRun = {
    events: [],
    prompt,
    tools: [],
    modelCalls: [],
    maxRunning: 0,
    maxRunningByTool: new Map(),
    pushedSteering: [],
    pushedFollowUps: [],
    completed: false,
    error: undefined,
    aborted: false,
    unsubscribed: false,
    atAbort: undefined,
    atUnsubscribe: undefined,
    atEnd: { events: 0, toolExecutes: 0, modelCalls: 0, hookCalls: 0 },
  };
  const counters = run.atEnd;
  let running = 0;
  const runningByTool = new Map<string, number>();

  const body = (toolCallId: string, toolName: string, plan: ToolCallPlan, context: { signal: AbortSignal; update: (partial: AgentToolResult) => void }) =>
    new Observable<AgentToolResult | { notAResult: true }>((subscriber) => {
      const record: ToolBodyRecord = { toolCallId, toolName, signal: context.signal, finished: false, tornDown: false };
      run.tools.push(record);
      running += 1;
      runningByTool.set(toolName, (runningByTool.get(toolName) ?? 0) + 1);
      run.maxRunning = Math.max(run.maxRunning, running);
      run.maxRunningByTool.set(toolName, Math.max(run.maxRunningByTool.get(toolName) ?? 0, runningByTool.get(toolName)!));
      const step = plan.updates + 1;
      const progress = Array.from({ length: plan.updates }, (_, index) =>
        timer(Math.floor(plan.latency / step), scheduler).pipe(
          map(() => {
            context.update({ content: [{ type: "text", text: `progress ${index}` }], details: { index } });
            return undefined;
          }),
        ),
      );
      const finalValue = timer(plan.latency - Math.floor(plan.latency / step) * plan.updates, scheduler);
      const inner = concat(...progress, finalValue).subscribe({
        complete: () => {
          record.finished = true;
          switch (plan.outcome) {
            case "error":
              subscriber.error(new Error(`tool ${toolCallId} failed`));
              return;
            case "non-result":
              subscriber.next({ notAResult: true });
              subscriber.complete();
              return;
            case "empty":
              subscriber.complete();
              return;
            default: {
              const result: AgentToolResult = { content: [{ type: "text", text: `result of ${toolCallId}` }], details: { toolCallId } };
              if (plan.terminate) result.terminate = true;
              subscriber.next(result);
              subscriber.complete();
            }
          }
        },
      });
      return () => {
        inner.unsubscribe();
        if (!record.finished) record.tornDown = true;
        running -= 1;
        runningByTool.set(toolName, runningByTool.get(toolName)! - 1);
      };
    });

  const parameters = Type.Object({
    latency: Type.Number(),
    outcome: Type.String(),
    updates: Type.Number(),
    terminate: Type.Boolean(),
  });
  const tool = (name: string, extra: Partial<AgentTool>): AgentTool =>
    defineTool({
      name,
      description: `scenario tool ${name}`,
      parameters,
      timeoutMs: TOOL_TIMEOUT_MS,
      ...extra,
      execute: (toolCallId, args, context) => {
        counters.toolExecutes += 1;
        const plan = args as unknown as ToolCallPlan;
        if (plan.outcome === "throw") throw new Error(`tool ${toolCallId} threw`);
        return body(toolCallId, name, plan, context) as Observable<AgentToolResult>;
      },
    }) as AgentTool;
  const tools = [tool("work", {}), tool("capped", { concurrency: 2 }), tool("serial", { executionMode: "sequential" })];

  // Enough replies for every extra turn steering and follow-ups can cause.
  const scripted = scriptedModel(
    Array.from({ length: scenario.turns.length + scenario.steering.length + scenario.followUps.length + 2 }, (_, index) => () => replyFor(scenario.turns[index], index)),
    { scheduler, delay: scenario.modelDelay },
  );
  const model: Model = {
    id: scripted.id,
    provider: scripted.provider,
    api: scripted.api,
    stream: (context, options) =>
      new Observable((subscriber) => {
        counters.modelCalls += 1;
        const call: ModelCallRecord = { signal: options.signal, open: true };
        run.modelCalls.push(call);
        const inner = scripted.stream(context, options).subscribe({
          next: (event) => {
            if (event.type === "done" || event.type === "error") call.open = false;
            subscriber.next(event);
          },
          error: (error: unknown) => {
            call.open = false;
            subscriber.error(error);
          },
          complete: () => {
            call.open = false;
            subscriber.complete();
          },
        });
        return () => inner.unsubscribe();
      }),
  };

  const steering = new Subject<AgentMessage>();
  const followUps = new Subject<AgentMessage>();
  const controller = new AbortController();
  let toolCallIndex = 0;
  const config: AgentLoopConfig = {
    model,
    scheduler,
    signal: controller.signal,
    steering,
    followUp: followUps,
    toolExecution: scenario.toolExecution,
    steeringMode: scenario.steeringMode,
    followUpMode: scenario.followUpMode,
    steeringInterruptsTools: scenario.steeringInterruptsTools,
  };
  if (scenario.maxConcurrency !== undefined) config.maxConcurrency = scenario.maxConcurrency;
  if (scenario.beforeToolCall.kind !== "absent") {
    const plan = scenario.beforeToolCall;
    config.beforeToolCall = () => {
      counters.hookCalls += 1;
      const index = toolCallIndex++;
      const block = scenario.blockEvery > 0 && index % scenario.blockEvery === 0;
      return planned(plan, index + 1, scheduler, () => (block ? { block: true, reason: "blocked by the scenario" } : undefined));
    };
  }
  if (scenario.afterToolCall.kind !== "absent") {
    const plan = scenario.afterToolCall;
    let calls = 0;
    config.afterToolCall = ({ result }) => {
      counters.hookCalls += 1;
      return planned(plan, ++calls, scheduler, () => ({ details: { audited: true, original: result.details } }));
    };
  }
  if (scenario.transformContext.kind !== "absent") {
    const plan = scenario.transformContext;
    let calls = 0;
    config.transformContext = (messages) => {
      counters.hookCalls += 1;
      return planned(plan, ++calls, scheduler, () => messages);
    };
  }
  if (scenario.stopAfterTurns !== undefined) {
    const stopAfter = scenario.stopAfterTurns;
    let turns = 0;
    config.shouldStopAfterTurn = () => {
      counters.hookCalls += 1;
      turns += 1;
      return turns >= stopAfter;
    };
  }

  const live = () =>
    !run.completed && !run.unsubscribed && run.error === undefined && run.events[run.events.length - 1]?.type !== "agent_end";
  let subscription: Subscription | undefined;
  const stop = scenario.stop;
  const stopAtEvent = options.stopAtEvent ?? ("atEvent" in stop ? { kind: stop.kind, index: stop.atEvent } : undefined);
  const pushSteering = (label: string) => {
    const message: UserMessage = { role: "user", content: `steering ${label}`, timestamp: scheduler.now() };
    if (live()) run.pushedSteering.push(message);
    steering.next(message);
  };
  const pushFollowUp = (label: string) => {
    const message: UserMessage = { role: "user", content: `follow-up ${label}`, timestamp: scheduler.now() };
    if (live()) run.pushedFollowUps.push(message);
    followUps.next(message);
  };
  const pushOnEvent = (index: number) => {
    scenario.steeringOnEvents.forEach((at, order) => at === index && pushSteering(`on event ${index} (${order})`));
    scenario.followUpsOnEvents.forEach((at, order) => at === index && pushFollowUp(`on event ${index} (${order})`));
  };
  const stopNow = (event: AgentEvent) => {
    if (stopAtEvent === undefined || run.events.length !== stopAtEvent.index + 1 || event.type === "agent_end") return;
    if (stopAtEvent.kind === "abort") {
      run.aborted = true;
      run.atAbort = { ...counters };
      controller.abort(new Error("abort at an event"));
    } else {
      run.unsubscribed = true;
      run.atUnsubscribe = { ...counters };
    }
  };
  scheduler.schedule(() => {
    const loop$ = agentLoop([prompt], { messages: [], tools }, config);
    const events$ = stopAtEvent?.kind === "unsubscribe" ? loop$.pipe(take(stopAtEvent.index + 1)) : loop$;
    subscription = events$.subscribe({
      next: (event) => {
        counters.events += 1;
        run.events.push(event);
        pushOnEvent(run.events.length - 1);
        stopNow(event);
      },
      error: (error: unknown) => (run.error = error),
      complete: () => (run.completed = !run.unsubscribed),
    });
  });
  scenario.steering.forEach((at, index) => scheduler.schedule(() => pushSteering(`${index}`), at));
  scenario.followUps.forEach((at, index) => scheduler.schedule(() => pushFollowUp(`${index}`), at));
  if (stop.kind === "abort" && "at" in stop) {
    scheduler.schedule(() => {
      if (live()) {
        run.aborted = true;
        run.atAbort = { ...counters };
      }
      controller.abort(new Error("scenario abort"));
    }, stop.at);
  } else if (stop.kind === "unsubscribe" && "at" in stop) {
    scheduler.schedule(() => {
      if (!live()) return;
      subscription?.unsubscribe();
      run.unsubscribed = true;
      run.atUnsubscribe = { ...counters };
    }, stop.at);
  }
  return run;
}
