/**
 * Random agent-loop scenarios for the property tests: what the model replies on each call, how
 * each tool call behaves, which hooks misbehave, and when steering, follow-ups, an abort or an
 * unsubscribe happen. A scenario is plain data, so fast-check prints a shrunk one readably.
 */
import fc from "fast-check";

/** How one tool call behaves. */
export type ToolOutcome =
  | "ok"
  /** `execute` throws synchronously. */
  | "throw"
  /** The returned Observable errors after `latency` (what a rejected Promise becomes). */
  | "error"
  /** Arguments that fail the schema (`latency` is not a number). */
  | "invalid-args"
  /** A tool name the run does not know. */
  | "unknown-tool"
  /** Runs past the tool's `timeoutMs`. */
  | "timeout"
  /** Completes with a value that is not a tool result. */
  | "non-result"
  /** Completes without a value. */
  | "empty";

/** Tools of the scenario: `work` runs free, `capped` has `concurrency: 2`, `serial` makes its batch sequential. */
export type ToolName = "work" | "capped" | "serial";

export interface ToolCallPlan {
  tool: ToolName;
  outcome: ToolOutcome;
  /** Virtual ms the tool body runs. */
  latency: number;
  /** Progress reports (`update` calls) before the result. */
  updates: number;
  terminate: boolean;
}

/** What the model does on one call. */
export type ModelFailure = "none" | "error-reply" | "observable-error" | "complete-early";

export interface TurnPlan {
  calls: ToolCallPlan[];
  failure: ModelFailure;
}

/**
 * How a hook behaves: absent, answers at once, answers after `delay` virtual ms, or throws on
 * every `every`-th call (and answers at once otherwise).
 */
export type HookPlan =
  | { kind: "absent" }
  | { kind: "sync" }
  | { kind: "delayed"; delay: number }
  | { kind: "throw"; every: number };

export interface Scenario {
  /** The model's reply per call; calls past the list answer with plain text. */
  turns: TurnPlan[];
  /** Virtual ms between the model's stream events. */
  modelDelay: number;
  maxConcurrency: number | undefined;
  toolExecution: "parallel" | "sequential";
  steeringMode: "one-at-a-time" | "all";
  followUpMode: "one-at-a-time" | "all";
  steeringInterruptsTools: boolean;
  beforeToolCall: HookPlan;
  /** Call indexes (in the run) that `beforeToolCall` blocks. */
  blockEvery: number;
  afterToolCall: HookPlan;
  transformContext: HookPlan;
  /** `shouldStopAfterTurn` says stop after this many turns; undefined: hook absent. */
  stopAfterTurns: number | undefined;
  /** Virtual times at which a steering message is pushed. */
  steering: number[];
  /** Virtual times at which a follow-up message is pushed. */
  followUps: number[];
  /** Event indexes at which the observer itself pushes a steering message (re-entrantly). */
  steeringOnEvents: number[];
  /** Event indexes at which the observer itself pushes a follow-up message (re-entrantly). */
  followUpsOnEvents: number[];
  /**
   * An abort or an unsubscribe at a virtual time, or from inside the observer as the event with
   * index `atEvent` is emitted.
   */
  stop: { kind: "none" } | { kind: "abort" | "unsubscribe"; at: number } | { kind: "abort" | "unsubscribe"; atEvent: number };
}

/** Longest tool body before its timeout (`timeoutMs` of every scenario tool). */
export const TOOL_TIMEOUT_MS = 40;

const time = fc.integer({ min: 0, max: 200 });
const eventIndex = fc.integer({ min: 0, max: 120 });

const toolCallPlan: fc.Arbitrary<ToolCallPlan> = fc.record({
  tool: fc.constantFrom<ToolName>("work", "work", "work", "capped", "capped", "serial"),
  outcome: fc.oneof(
    { weight: 8, arbitrary: fc.constant<ToolOutcome>("ok") },
    {
      weight: 7,
      arbitrary: fc.constantFrom<ToolOutcome>("throw", "error", "invalid-args", "unknown-tool", "timeout", "non-result", "empty"),
    },
  ),
  latency: fc.integer({ min: 0, max: 30 }),
  updates: fc.integer({ min: 0, max: 2 }),
  terminate: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 4, arbitrary: fc.constant(false) }),
});

const turnPlan: fc.Arbitrary<TurnPlan> = fc.record({
  calls: fc.oneof(
    { weight: 1, arbitrary: fc.constant<ToolCallPlan[]>([]) },
    { weight: 5, arbitrary: fc.array(toolCallPlan, { minLength: 1, maxLength: 6 }) },
  ),
  failure: fc.oneof(
    { weight: 12, arbitrary: fc.constant<ModelFailure>("none") },
    { weight: 1, arbitrary: fc.constantFrom<ModelFailure>("error-reply", "observable-error", "complete-early") },
  ),
});

const hookPlan: fc.Arbitrary<HookPlan> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<HookPlan>({ kind: "absent" }) },
  { weight: 2, arbitrary: fc.constant<HookPlan>({ kind: "sync" }) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 8 }).map((delay): HookPlan => ({ kind: "delayed", delay })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }).map((every): HookPlan => ({ kind: "throw", every })) },
);

export interface ScenarioOptions {
  /** Which kinds of stop to generate. Default: none, abort and unsubscribe. */
  stops?: ("none" | "abort" | "unsubscribe")[];
}

export function scenarioArbitrary(options: ScenarioOptions = {}): fc.Arbitrary<Scenario> {
  const stops = options.stops ?? ["none", "abort", "unsubscribe"];
  const stop = fc.oneof(
    ...stops.map((kind) =>
      kind === "none"
        ? fc.constant<Scenario["stop"]>({ kind: "none" })
        : fc.oneof(
            time.map((at): Scenario["stop"] => ({ kind, at })),
            eventIndex.map((atEvent): Scenario["stop"] => ({ kind, atEvent })),
          ),
    ),
  );
  return fc.record({
    turns: fc.array(turnPlan, { minLength: 1, maxLength: 8 }),
    modelDelay: fc.integer({ min: 1, max: 4 }),
    maxConcurrency: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    toolExecution: fc.constantFrom("parallel" as const, "parallel" as const, "sequential" as const),
    steeringMode: fc.constantFrom("one-at-a-time" as const, "all" as const),
    followUpMode: fc.constantFrom("one-at-a-time" as const, "all" as const),
    steeringInterruptsTools: fc.boolean(),
    beforeToolCall: hookPlan,
    blockEvery: fc.integer({ min: 0, max: 5 }),
    afterToolCall: hookPlan,
    transformContext: hookPlan,
    stopAfterTurns: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
    steering: fc.array(time, { maxLength: 4 }),
    followUps: fc.array(time, { maxLength: 4 }),
    steeringOnEvents: fc.array(eventIndex, { maxLength: 2 }),
    followUpsOnEvents: fc.array(eventIndex, { maxLength: 2 }),
    stop,
  });
}
