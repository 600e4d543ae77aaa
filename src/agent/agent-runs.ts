import { EMPTY, type Observable } from "rxjs";
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentState, OutputOf, OutputSchema, PromptInput } from "../types.js";
import { type ActiveRun, newActiveRun, tearDownRun } from "./active-run.js";
import { type AgentOptions, runConfig, runContext, schedulerOf } from "./agent-options.js";
import { firstIdle } from "./agent-promises.js";
import type { QueueCounts } from "./agent-queues.js";
import { AgentControls, type RunRequestTarget } from "./agent-controls.js";
import { checkConfig, checkTranscriptDepth } from "../streams/check-config.js";
import { OnDemandSubject, OnDemandValue } from "./on-demand-subject.js";
import { toMessages } from "./prompt-input.js";
import { jsonDepthOf } from "../util/json-depth.js";
import { freshAgentState, patchState } from "./published-state.js";
import { warn } from "./store-writer.js";
import { subscribeRun } from "./subscribe-run.js";
import type { AgentListener } from "./run-listeners.js";
import { AgentListeners } from "./agent-listeners.js";

/**
 * The runs of an `Agent`: starting one (one at a time) with the agent's options, queues and
 * transcript; publishing its events and the state they make (`events$`, `state$`); and the
 * `subscribe` listeners that follow them. `Agent` adds the ways runs start and what changes the
 * session between them (agent.ts); `AgentControls` what a caller does without starting one.
 *
 * Why a base class of `Agent` (its only subclass): the agent is one object, and this is the part
 * its public commands share; here it gets a file of its own.
 */
export abstract class AgentRuns<TOutputSchema extends OutputSchema = OutputSchema> extends AgentControls {
  // Subjects are made when first asked for: a server may hold thousands of idle agents, and most
  // of them are never listened to between runs.
  protected readonly stateValue: OnDemandValue<AgentState>;
  protected readonly eventStream = new OnDemandSubject<AgentEvent<unknown, OutputOf<TOutputSchema>>>();
  protected activeRun: ActiveRun<OutputOf<TOutputSchema>> | undefined;
  protected options: AgentOptions<TOutputSchema>;
  /** `subscribe`'s listeners; made on first use, as most agents have none. */
  protected listeners: AgentListeners<OutputOf<TOutputSchema>> | undefined;

  /** Contract: throws an `InvalidConfigError` at once for a config that cannot work (no model, …). */
  constructor(options: AgentOptions<TOutputSchema>) {
    super();
    checkConfig(options, options.tools, "Agent");
    checkTranscriptDepth(options.messages, jsonDepthOf(options), "The agent");
    this.options = options;
    this.steeringMode = options.steeringMode ?? "one-at-a-time";
    this.followUpMode = options.followUpMode ?? "one-at-a-time";
    this.stateValue = new OnDemandValue(freshAgentState(options.messages ?? []));
  }

  /** Every event of every run, hot: a late subscriber gets what comes next. */
  get events$(): Observable<AgentEvent<unknown, OutputOf<TOutputSchema>>> {
    return this.eventStream.observable;
  }

  /** The current state, replayed to each new subscriber, then every change. */
  get state$(): Observable<AgentState> {
    return this.stateValue.observable;
  }

  get state(): AgentState {
    return this.stateValue.value;
  }

  get messages(): readonly AgentMessage[] {
    return this.state.messages;
  }

  /**
   * The active run's events, replayed from its `agent_start` (what `prompt` returned), or
   * undefined while idle. After `Agent.open` reopened a run (its first events came during
   * `open`), this is how to follow that run whole.
   */
  get currentRun$(): Observable<AgentEvent<unknown, OutputOf<TOutputSchema>>> | undefined {
    return this.activeRun?.events.asObservable();
  }

  get isRunning(): boolean {
    return this.activeRun !== undefined;
  }

  /**
   * The abort signal of the active run, or of the last run while its `subscribe` listeners are
   * still working on it (as pi-agent-core's `signal`); undefined when idle.
   */
  get signal(): AbortSignal | undefined {
    return this.currentController()?.signal;
  }

  /**
   * Calls `listener` with every event of every run, and the run's abort signal; returns the
   * function that detaches it (events still waiting for it are dropped).
   *
   * Contract: a listener that returns a Promise gets its next event once that Promise settles,
   * so its calls keep the events' order; `run()` and `waitForIdle()` resolve only after the
   * Promises listeners returned for the run have settled, the one for `agent_end` included. The
   * run itself does not wait for them (unlike pi-agent-core's loop). A listener that throws or
   * rejects is told to `onWarning` and goes on getting events. Waiting inside a listener for
   * `waitForIdle()` or the same run's `run()` would wait for itself.
   * @example const unsubscribe = agent.subscribe(async (event, signal) => { if (event.type === "agent_end") await persist(event.messages, signal); });
   */
  subscribe(listener: AgentListener<OutputOf<TOutputSchema>>): () => void {
    return (this.listeners ??= new AgentListeners((message) => warn(this.options.onWarning, message))).add(listener);
  }

  /** Resolves once no run is active and the `subscribe` listeners are done with every run, or once the agent is disposed. */
  waitForIdle(): Promise<void> {
    return firstIdle(
      this.state$,
      (state) => !state.isStreaming && this.activeRun === undefined,
      () => this.listeners?.settled() ?? EMPTY,
    );
  }

  protected tearDownRun(): void {
    const run = this.activeRun;
    this.activeRun = undefined;
    if (run) tearDownRun(run);
  }

  protected startRun(
    createLoop: (config: AgentLoopConfig, context: AgentContext) => Observable<AgentEvent>,
    skipFirstSteeringDrain = false,
  ): ActiveRun<OutputOf<TOutputSchema>> {
    const run = newActiveRun<OutputOf<TOutputSchema>>(this.options.runReplay ?? "full");
    this.activeRun = run;
    const config = runConfig(this.options, run, this, () => this.queuesValue, () => this.queues, skipFirstSteeringDrain);
    const loop = createLoop(config, runContext(this.options, this.state.messages));
    // After the loop was made: a run whose loop threw at once would keep waitForIdle waiting.
    run.listeners = this.listeners?.forRun(run.controller);
    subscribeRun(run, loop, this.state.messages, {
      options: () => this.options,
      state: this.stateValue,
      events: this.eventStream,
      isCurrent: () => this.activeRun === run,
      release: () => {
        if (this.activeRun === run) this.activeRun = undefined;
      },
    });
    return run;
  }

  /** The controller of the active run, else of the latest run its listeners still work on. */
  protected currentController(): AbortController | undefined {
    return this.activeRun?.controller ?? this.listeners?.latestController();
  }

  protected activeRunOrUndefined(): RunRequestTarget | undefined {
    return this.activeRun;
  }

  protected messagesOf(input: PromptInput): AgentMessage[] {
    return toMessages(input, this.now(), jsonDepthOf(this.options));
  }

  protected publishCounts(counts: QueueCounts): void {
    patchState(this.stateValue, counts);
  }

  protected now(): number {
    return schedulerOf(this.options).now();
  }
}
