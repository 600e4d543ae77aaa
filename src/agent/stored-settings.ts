import type { AgentMessage, AgentTool, Model, StoredSettings, TranscriptRecord, TranscriptStore } from "../types.js";
import type { AgentOptions } from "./agent-options.js";
import type { AgentStatePatch } from "./replace-state.js";

/**
 * The settings a `replaceState` patch changes, as a session keeps them (the model and the tools
 * by name: they are code), or undefined when it changes none.
 */
export function storedSettingsOf(patch: AgentStatePatch): StoredSettings | undefined {
  const settings: StoredSettings = {};
  if (patch.systemPrompt !== undefined) settings.systemPrompt = patch.systemPrompt;
  if (patch.thinkingLevel !== undefined) settings.thinkingLevel = patch.thinkingLevel;
  // A model of one's own without a provider or id cannot be found again by name: not kept.
  if (typeof patch.model?.provider === "string" && typeof patch.model.id === "string") settings.model = { provider: patch.model.provider, id: patch.model.id };
  if (patch.tools !== undefined) settings.tools = patch.tools.map((tool) => tool.name);
  return Object.keys(settings).length > 0 ? settings : undefined;
}

/**
 * What a `configure` changes of the settings the session keeps already (a `replaceState` wrote
 * them): written too, or `Agent.open` would bring back the older value over the newer one. Settings
 * the session never kept stay the caller's to pass to `Agent.open`, as they were.
 */
export function reconfiguredSettings(kept: StoredSettings | undefined, options: AgentStatePatch): StoredSettings | undefined {
  const changed = kept && storedSettingsOf(options);
  if (!changed) return undefined;
  const reconfigured: StoredSettings = {};
  if (changed.systemPrompt !== undefined && kept.systemPrompt !== undefined) reconfigured.systemPrompt = changed.systemPrompt;
  if (changed.thinkingLevel !== undefined && kept.thinkingLevel !== undefined) reconfigured.thinkingLevel = changed.thinkingLevel;
  if (changed.model !== undefined && kept.model !== undefined) reconfigured.model = changed.model;
  if (changed.tools !== undefined && kept.tools !== undefined) reconfigured.tools = changed.tools;
  return Object.keys(reconfigured).length > 0 ? reconfigured : undefined;
}

/**
 * Writes a `replaceState` to the store, before the agent changes anything (so what the store
 * throws leaves the agent as it was). A new transcript replaces the store's whole content, the
 * session's settings so far (`kept`) following it; without one, the settings `changed` are one
 * more record. A store without records keeps the transcript only.
 */
export function storeReplacement(store: TranscriptStore, messages: readonly AgentMessage[] | undefined, changed: StoredSettings | undefined, kept: StoredSettings | undefined): void {
  const records: TranscriptRecord[] = kept && store.record ? [{ type: "settings", settings: kept }] : [];
  if (messages) return replaceStoredTranscript(store, messages, records);
  if (changed && store.record) store.record({ type: "settings", settings: changed });
}

/**
 * Makes `messages` and `records` the store's whole content: in one step with `replace`, else
 * `clear`, an `append` per message and a `record` per record. Throws what the store throws.
 */
export function replaceStoredTranscript(store: TranscriptStore, messages: readonly AgentMessage[], records: readonly TranscriptRecord[] = []): void {
  if (store.replace) return store.replace(messages, records);
  store.clear();
  for (const message of messages) store.append(message);
  for (const record of records) store.record?.(record);
}

/** What `Agent.open` takes besides an agent's options. */
export interface AgentOpenOptions {
  store: TranscriptStore;
  /**
   * Models the session may have switched to (`replaceState({ model })`) besides `model`: the one
   * whose `provider` and `id` the store names is used. Default: `model` only.
   */
  models?: readonly Model[];
}

/**
 * The options of an agent reopened on a session's `settings`: its system prompt and thinking
 * level as kept; its model and tools found by name among those given (`model`, `models`,
 * `tools`). Why warnings rather than throws for a model or tool not given: a session must stay
 * openable after the app dropped a tool; it goes on with what it was given, and `warn` says
 * what is missing.
 */
export function reopenedOptions<TOptions extends AgentOptions>(options: TOptions & { models?: readonly Model[] }, settings: StoredSettings | undefined, warn: (message: string) => void): TOptions {
  const { models, ...reopened } = options;
  if (!settings) return reopened as unknown as TOptions;
  if (settings.systemPrompt !== undefined) reopened.systemPrompt = settings.systemPrompt;
  if (settings.thinkingLevel !== undefined) reopened.thinkingLevel = settings.thinkingLevel;
  if (settings.model) {
    const { provider, id } = settings.model;
    const model = [options.model, ...(models ?? [])].find((candidate) => candidate?.provider === provider && candidate.id === id);
    if (model) reopened.model = model;
    else warn(`The session switched to the model "${provider}/${id}", which Agent.open was not given (model, models); it goes on with "${options.model?.provider}/${options.model?.id}".`);
  }
  if (settings.tools) reopened.tools = namedTools(settings.tools, options.tools ?? [], warn);
  return reopened as unknown as TOptions;
}

/** The tools of `available` named in `names`, in that order; a name not among them is told to `warn`. */
function namedTools(names: readonly string[], available: readonly AgentTool[], warn: (message: string) => void): AgentTool[] {
  const byName = new Map(available.map((tool) => [tool.name, tool]));
  const missing = names.filter((name) => !byName.has(name));
  if (missing.length > 0) {
    warn(`The session's tools include ${missing.map((name) => `"${name}"`).join(", ")}, which Agent.open was not given (tools); it goes on without ${missing.length === 1 ? "it" : "them"}.`);
  }
  // A name twice (an edited file) would make two tools of one name, which no agent accepts.
  return [...new Set(names)].flatMap((name) => {
    const tool = byName.get(name);
    return tool ? [tool] : [];
  });
}
