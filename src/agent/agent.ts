import { EMPTY, type Observable } from "rxjs";
import type {
  AgentContext,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentSnapshot,
  AgentState,
  OutputOf,
  OutputSchema,
  PromptInput,
  StoredSettings,
  ToolResultMessage,
} from "../types.js";
import { type ActiveRun, assertNoActiveRun, newActiveRun, tearDownRun } from "./active-run.js";
import { type AgentOptions, runConfig, runContext, schedulerOf } from "./agent-options.js";
import { firstIdle, messagesAtEnd, type RunMessages } from "./agent-promises.js";
import { agentLoop, agentLoopContinue, agentLoopReopened } from "../streams/agent-loop.js";
import type { QueueCounts } from "./agent-queues.js";
import { AgentControls, type RunRequestTarget } from "./agent-controls.js";
import { snapshotOf, snapshotOptions } from "./agent-snapshot.js";
import { checkConfig, checkTranscriptDepth } from "../streams/check-config.js";
import { continueInput } from "./continue-input.js";
import { OnDemandSubject, OnDemandValue } from "./on-demand-subject.js";
import { toMessages } from "./prompt-input.js";
import { jsonDepthOf } from "../util/json-depth.js";
import { freshAgentState, patchState } from "./published-state.js";
import { reopenedApprovals, reopenedResults, reopenedToolCalls } from "../streams/transcript/reopened-tool-calls.js";
import { warn } from "./store-writer.js";
import { subscribeRun } from "./subscribe-run.js";
import type { AgentListener } from "./run-listeners.js";
import { AgentListeners } from "./agent-listeners.js";
import { type AgentSettings, type AgentStatePatch, replacedOptions, replacedTranscriptState } from "./replace-state.js";
import { type AgentOpenOptions, reopenedOptions, storedSettingsOf, storeReplacement } from "./stored-settings.js";

export type { AgentOptions } from "./agent-options.js";

/**
 * A long-lived agent around the loop: it keeps the transcript, owns the steering and follow-up
 * queues that feed every run (filled by `steer`, `followUp` or their Subjects), and publishes
 * `events$` and `state$`.
 *
 * One run at a time: `prompt` starts one, `steer` and `followUp` talk to it while it works.
 * With `output`, each run's `agent_end.output` is typed from the schema.
 */
export class Agent<TOutputSchema extends OutputSchema = OutputSchema> extends AgentControls {
  // Subjects are made when first asked for: a server may hold thousands of idle agents, and most
  // of them are never listened to between runs.
  private readonly stateValue: OnDemandValue<AgentState>;
  private readonly eventStream = new OnDemandSubject<AgentEvent<unknown, OutputOf<TOutputSchema>>>();
  private activeRun: ActiveRun<OutputOf<TOutputSchema>> | undefined;
  private options: AgentOptions<TOutputSchema>;
  /** `subscribe`'s listeners; made on first use, as most agents have none. */
  private listeners: AgentListeners<OutputOf<TOutputSchema>> | undefined;
  /**
   * Results the store kept for the transcript's last tool calls, with the interrupted error for
   * the others, in call order (`Agent.open`): the next run starts with them rather than with
   * `missingToolResults`.
   */
  private storedResults: ToolResultMessage[] | undefined;
  /** The settings the store keeps (`replaceState`, `Agent.open`): written again when a new transcript replaces the store's. */
  private storedSettings: StoredSettings | undefined;

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

  /**
   * Opens an agent on a store and picks up the transcript it holds.
   *
   * With a store that keeps records (`TranscriptStore.record`, as `JsonlTranscriptStore` does),
   * a run that stopped while calls waited for approval is reopened at once: the agent is running,
   * `state.pendingApprovals` holds the same calls (same ids, tool, arguments and `since`), and
   * `approve` / `deny` answer them; once every reopened call has its result, the run goes on to
   * the next model call. Calls of that batch that had finished keep their results; calls that
   * were running get the interrupted error, as `continue` gives them. See README "Approvals".
   *
   * Settings `replaceState` changed are kept by such a store too: the system prompt and thinking
   * level are applied as kept, the model and tools are found by name among `model`, `models` and
   * `tools` (one not given goes to `onWarning`, and the agent goes on with what it was given).
   */
  static async open<TOutputSchema extends OutputSchema = OutputSchema>(options: AgentOptions<TOutputSchema> & AgentOpenOptions): Promise<Agent<TOutputSchema>> {
    const { store } = options;
    const stored = store.loadTranscript ? await store.loadTranscript() : { messages: await store.load(), records: [] };
    const onWarning = (message: string): void => warn(options.onWarning, message);
    const agent = new Agent({ ...reopenedOptions(options, stored.settings, onWarning), messages: stored.messages });
    agent.storedSettings = stored.settings;
    const reopened = reopenedToolCalls(agent.state.messages, stored.records, agent.now(), onWarning);
    if (reopened && reopenedApprovals(reopened).length > 0) agent.startRun((config, context) => agentLoopReopened(reopened, context, config));
    else agent.storedResults = reopened && reopenedResults(reopened);
    return agent;
  }

  /** Recreates an agent from `snapshot()`, queued messages included. */
  static fromSnapshot<TOutputSchema extends OutputSchema = OutputSchema>(snapshot: AgentSnapshot, options: AgentOptions<TOutputSchema>): Agent<TOutputSchema> {
    const agent = new Agent(snapshotOptions(snapshot, options));
    for (const message of snapshot.queued.steering) agent.steer(message);
    for (const message of snapshot.queued.followUp) agent.followUp(message);
    return agent;
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

  /** Changes the model, tools, system prompt, hooks or queue modes for the next run. */
  configure(options: Partial<Omit<AgentOptions<TOutputSchema>, "messages" | "store">>): void {
    const configured = { ...this.options, ...options };
    checkConfig(configured, configured.tools, "Agent.configure");
    this.options = configured;
    if (options.steeringMode !== undefined) this.steeringMode = options.steeringMode;
    if (options.followUpMode !== undefined) this.followUpMode = options.followUpMode;
  }

  /**
   * Replaces the transcript, system prompt, model, tools or thinking level between runs
   * (pi-agent-core's `state.messages = …` and its siblings): to compact, edit, branch, or switch
   * models. The agent keeps a copy of `messages`; its store, if any, is rewritten to hold them (in
   * one step with a store that has `replace`, as the JSONL and Redis stores do), so `Agent.open`
   * reopens on the new transcript; a store with records (both of those) also keeps the settings
   * changed, for `Agent.open` to apply. Queued messages stay; totals (`state.usage`) are counted again.
   *
   * Contract: throws an `InvalidStateError` while a run is active, an `InvalidConfigError` naming
   * the field for bad input (each message is checked as `prompt` checks one), and what the store
   * throws; the agent is unchanged then.
   * @example agent.replaceState({ messages: [summary, ...agent.messages.slice(-10)] });
   */
  replaceState(patch: AgentStatePatch): void {
    const options = replacedOptions(this.options, patch, this.activeRun !== undefined);
    const messages = patch.messages && [...patch.messages];
    const changed = storedSettingsOf(patch);
    const settings = changed ? { ...this.storedSettings, ...changed } : this.storedSettings;
    if (options.store) storeReplacement(options.store, messages, changed, settings);
    this.options = options;
    this.storedSettings = settings;
    if (!messages) return;
    // Kept for the old transcript's last tool calls (Agent.open): they answer nothing now.
    this.storedResults = undefined;
    this.stateValue.next(replacedTranscriptState(this.state, messages));
  }

  /** The system prompt, model, tools and thinking level the next run uses (`replaceState` changes them). */
  get settings(): AgentSettings {
    const { systemPrompt, model, tools, thinkingLevel } = this.options;
    return { systemPrompt, model, tools, thinkingLevel };
  }

  /**
   * Starts a run with new input and returns its events, hot and replayed: the run goes on
   * whether or not anyone subscribes, and a late subscriber still sees it from the start.
   *
   * Contract: throws an `InvalidStateError` while a run is active; use `steer` or `followUp`.
   */
  prompt(input: PromptInput): Observable<AgentEvent<unknown, OutputOf<TOutputSchema>>> {
    return this.startPrompt(input).events.asObservable();
  }

  /**
   * Runs a prompt to its end: the Promise form of `prompt`, for `await`.
   *
   * Contract: resolves with the messages the run added (`agent_end.messages`, the prompt
   * included) when the run ends and the Promises its `subscribe` listeners returned for it have
   * settled, also when the model failed or the run was aborted (errors are
   * data: look at the last assistant message's `stopReason`). Rejects with an
   * `InvalidStateError` while another run is active, or when `reset` or `dispose` stops the run
   * before it ends. With an `output` schema the array also carries the run's typed `output`
   * (or `outputError`), as `agent_end` does.
   * @example const messages = await agent.run("What is 2 + 3?");
   * @example const { output } = await new Agent({ model, output: Weather }).run("Weather in Paris?");
   */
  run(input: PromptInput): Promise<RunMessages<OutputOf<TOutputSchema>>> {
    return messagesAtEnd(() => {
      const run = this.startPrompt(input);
      return { events: run.events, listenersSettled: run.listeners?.settled() };
    });
  }

  /**
   * Resumes from the transcript. A transcript that ends in tool calls without results (a crash
   * during tool execution) is repaired first: each missing result becomes an error result, or
   * the result the store kept for it (`Agent.open`). One that ends with an assistant message runs
   * the queued messages instead.
   *
   * Contract: throws an `InvalidStateError` while running, or when there is nothing to do.
   */
  continue(): Observable<AgentEvent<unknown, OutputOf<TOutputSchema>>> {
    assertNoActiveRun(this.activeRun, "continue");
    const input = continueInput(this.state.messages, this.takeStoredResults(), () => this.queuesValue?.takeForContinue(this.steeringMode, this.followUpMode) ?? { messages: [], steering: false }, this.now());
    const run =
      input.type === "transcript"
        ? this.startRun((config, context) => agentLoopContinue(context, config))
        : this.startRun((config, context) => agentLoop(input.messages, context, config), input.steered);
    return run.events.asObservable();
  }

  /** Forgets the transcript, the queues and the totals; a running run is torn down first. */
  reset(): void {
    this.tearDownRun();
    this.clearAllQueues();
    this.storedResults = undefined;
    // The store forgets its settings records with the rest.
    this.storedSettings = undefined;
    this.options.store?.clear();
    this.stateValue.next(freshAgentState([]));
  }

  /** Resolves once no run is active and the `subscribe` listeners are done with every run. */
  waitForIdle(): Promise<void> {
    return firstIdle(
      this.state$,
      (state) => !state.isStreaming && this.activeRun === undefined,
      () => this.listeners?.settled() ?? EMPTY,
    );
  }

  /** The agent as plain JSON. */
  snapshot(): AgentSnapshot {
    return snapshotOf(this.state.messages, this.queuesValue?.peek(), this.options.systemPrompt);
  }

  /** Tears down the active run and stops publishing; the transcript store keeps what it has. */
  dispose(): void {
    this.tearDownRun();
    this.queues.close();
    this.eventStream.complete();
    this.stateValue.complete();
    this.options.store?.close?.();
  }

  private tearDownRun(): void {
    const run = this.activeRun;
    this.activeRun = undefined;
    if (run) tearDownRun(run);
  }

  private startPrompt(input: PromptInput): ActiveRun<OutputOf<TOutputSchema>> {
    assertNoActiveRun(this.activeRun, "prompt");
    const prompts = this.messagesOf(input);
    const stored = this.takeStoredResults();
    return this.startRun((config, context) => agentLoop(stored ? [...stored, ...prompts] : prompts, context, config));
  }

  private startRun(
    createLoop: (config: AgentLoopConfig, context: AgentContext) => Observable<AgentEvent>,
    skipFirstSteeringDrain = false,
  ): ActiveRun<OutputOf<TOutputSchema>> {
    const run = newActiveRun<OutputOf<TOutputSchema>>();
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

  private takeStoredResults(): ToolResultMessage[] | undefined {
    const stored = this.storedResults;
    this.storedResults = undefined;
    return stored;
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

  private now(): number {
    return schedulerOf(this.options).now();
  }
}
