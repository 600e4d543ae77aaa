import type { Observable } from "rxjs";
import type { AgentEvent, AgentSnapshot, OutputOf, OutputSchema, PromptInput, StoredSettings, ToolResultMessage } from "../types.js";
import { type ActiveRun, assertNoActiveRun } from "./active-run.js";
import type { AgentOptions } from "./agent-options.js";
import { messagesAtEnd, type RunMessages } from "./agent-promises.js";
import { AgentRuns } from "./agent-runs.js";
import { agentLoop, agentLoopContinue, agentLoopReopened } from "../streams/agent-loop.js";
import { snapshotOf, snapshotOptions } from "./agent-snapshot.js";
import { checkConfig } from "../streams/check-config.js";
import { InvalidConfigError } from "../errors.js";
import { describe } from "../model/check-model-message.js";
import { continueInput } from "./continue-input.js";
import { freshAgentState } from "./published-state.js";
import { reopenedApprovals, reopenedResults, reopenedToolCalls } from "../streams/transcript/reopened-tool-calls.js";
import { warn } from "./store-writer.js";
import { type AgentSettings, type AgentStatePatch, replacedOptions, replacedTranscriptState } from "./replace-state.js";
import { type AgentOpenOptions, reconfiguredSettings, reopenedOptions, storedSettingsOf, storeReplacement } from "./stored-settings.js";

export type { AgentOptions } from "./agent-options.js";

/**
 * A long-lived agent around the loop: it keeps the transcript, owns the steering and follow-up
 * queues that feed every run (filled by `steer`, `followUp` or their Subjects), and publishes
 * `events$` and `state$`.
 *
 * One run at a time: `prompt` starts one, `steer` and `followUp` talk to it while it works.
 * With `output`, each run's `agent_end.output` is typed from the schema.
 */
export class Agent<TOutputSchema extends OutputSchema = OutputSchema> extends AgentRuns<TOutputSchema> {
  /**
   * Results the store kept for the transcript's last tool calls, with the interrupted error for
   * the others, in call order (`Agent.open`): the next run starts with them rather than with
   * `missingToolResults`.
   */
  private storedResults: ToolResultMessage[] | undefined;
  /** The settings the store keeps (`replaceState`, `Agent.open`): written again when a new transcript replaces the store's. */
  private storedSettings: StoredSettings | undefined;

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

  /**
   * Changes the model, tools, system prompt, thinking level, hooks or queue modes for the next run.
   * A setting the session's store keeps (one `replaceState` changed) is written there too.
   */
  configure(options: Partial<Omit<AgentOptions<TOutputSchema>, "messages" | "store">>): void {
    if (typeof options !== "object" || options === null || Array.isArray(options)) {
      throw new InvalidConfigError("options", `Agent.configure takes an object such as { model, tools, systemPrompt }, got ${describe(options)}.`);
    }
    const configured = { ...this.options, ...options };
    checkConfig(configured, configured.tools, "Agent.configure");
    const reconfigured = reconfiguredSettings(this.storedSettings, options);
    if (reconfigured && configured.store) storeReplacement(configured.store, undefined, reconfigured, undefined);
    this.options = configured;
    if (reconfigured) this.storedSettings = { ...this.storedSettings, ...reconfigured };
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
      return { events: run.events.asObservable(), listenersSettled: run.listeners?.settled() };
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

  /** The agent as plain JSON. */
  snapshot(): AgentSnapshot {
    return snapshotOf(this.state.messages, this.queuesValue?.peek(), this.options);
  }

  /** Tears down the active run and stops publishing; the transcript store keeps what it has. */
  dispose(): void {
    this.tearDownRun();
    this.queues.close();
    this.eventStream.complete();
    this.stateValue.complete();
    this.options.store?.close?.();
  }

  private startPrompt(input: PromptInput): ActiveRun<OutputOf<TOutputSchema>> {
    assertNoActiveRun(this.activeRun, "prompt");
    const prompts = this.messagesOf(input);
    const stored = this.takeStoredResults();
    return this.startRun((config, context) => agentLoop(stored ? [...stored, ...prompts] : prompts, context, config));
  }

  private takeStoredResults(): ToolResultMessage[] | undefined {
    const stored = this.storedResults;
    this.storedResults = undefined;
    return stored;
  }
}
