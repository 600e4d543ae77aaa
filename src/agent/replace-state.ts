import { InvalidConfigError, InvalidStateError } from "../errors.js";
import { checkConfig, checkPrompts } from "../streams/check-config.js";
import type { AgentMessage, AgentState, AgentTool, Model, OutputSchema, ThinkingLevel } from "../types.js";
import { jsonDepthOf } from "../util/json-depth.js";
import type { AgentOptions } from "./agent-options.js";
import { freshAgentState } from "./published-state.js";

/**
 * What `Agent.replaceState` can replace between runs: the transcript (compacted, edited, a
 * branch), the system prompt, the model, the tools, the thinking level. A field left out stays
 * as it is.
 * @example agent.replaceState({ messages: agent.messages.slice(-20), systemPrompt: "Be brief.", thinkingLevel: "low" })
 */
export interface AgentStatePatch extends Partial<AgentSettings> {
  /** The new transcript; the agent keeps a copy of the array (the messages themselves are shared). */
  messages?: readonly AgentMessage[];
}

/** The settings of an `Agent` besides its transcript, as `Agent.settings` reads them and `replaceState` replaces them. */
export interface AgentSettings {
  systemPrompt?: string;
  model: Model;
  tools?: AgentTool[];
  /** How hard the model thinks on each call (`AgentLoopConfig.thinkingLevel`); unset: as the model was configured. */
  thinkingLevel?: ThinkingLevel;
}

const patchFields: ReadonlySet<string> = new Set(["messages", "systemPrompt", "model", "tools", "thinkingLevel"]);

/**
 * The agent's options with `patch` applied, once every field checked as `prompt` checks its
 * input: each message element by element, the model and tools as the constructor checks them.
 *
 * Contract: throws an `InvalidStateError` while a run is active (`running`), and an
 * `InvalidConfigError` naming the field (`messages[2]`, `tools[0].name`, `thinkingLevel`) for bad
 * input; nothing changes then.
 */
export function replacedOptions<TOutputSchema extends OutputSchema>(
  options: AgentOptions<TOutputSchema>,
  patch: AgentStatePatch,
  running: boolean,
): AgentOptions<TOutputSchema> {
  if (running) {
    throw new InvalidStateError("Cannot replace the agent's state while it is running: wait for the run to end (waitForIdle()), or abort() it first.");
  }
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
    throw new InvalidConfigError("patch", `Agent.replaceState takes an object such as { messages, systemPrompt, model, tools, thinkingLevel }, got ${patch === null ? "null" : typeof patch}.`);
  }
  for (const field of Object.keys(patch)) {
    if (!patchFields.has(field)) throw new InvalidConfigError(field, `Agent.replaceState replaces messages, systemPrompt, model, tools and thinkingLevel, not ${field}.`);
  }
  if (patch.messages !== undefined) checkPrompts(patch.messages, "Agent.replaceState", jsonDepthOf(options), "messages");
  if (patch.systemPrompt !== undefined && typeof patch.systemPrompt !== "string") {
    throw new InvalidConfigError("systemPrompt", `must be a string, got ${typeof patch.systemPrompt}.`);
  }
  if (patch.tools !== undefined) checkTools(patch.tools);
  const replaced: AgentOptions<TOutputSchema> = { ...options };
  if (patch.systemPrompt !== undefined) replaced.systemPrompt = patch.systemPrompt;
  if (patch.model !== undefined) replaced.model = patch.model;
  if (patch.tools !== undefined) replaced.tools = [...patch.tools];
  if (patch.thinkingLevel !== undefined) replaced.thinkingLevel = patch.thinkingLevel;
  checkConfig(replaced, replaced.tools, "Agent.replaceState");
  return replaced;
}

/** Throws unless `tools` is an array of tools with an `execute` function (names are `checkConfig`'s). */
function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) throw new InvalidConfigError("tools", `must be an array of tools, got ${typeof tools}.`);
  tools.forEach((tool: unknown, index) => {
    if (typeof tool !== "object" || tool === null || typeof (tool as { execute?: unknown }).execute !== "function") {
      throw new InvalidConfigError(`tools[${index}]`, "must be a tool with an execute function (see defineTool).");
    }
  });
}

/** The state of an idle agent whose transcript became `messages`: totals from them, the queue counts as they were. */
export function replacedTranscriptState(state: AgentState, messages: readonly AgentMessage[]): AgentState {
  return { ...freshAgentState(messages), queuedSteering: state.queuedSteering, queuedFollowUp: state.queuedFollowUp };
}
