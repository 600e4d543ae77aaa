import { InvalidConfigError, InvalidStateError } from "../errors.js";
import { checkConfig, checkPrompts } from "../streams/check-config.js";
import type { AgentMessage, AgentState, AgentTool, Model, OutputSchema, TranscriptStore } from "../types.js";
import { jsonDepthOf } from "../util/json-depth.js";
import type { AgentOptions } from "./agent-options.js";
import { freshAgentState } from "./published-state.js";

/**
 * What `Agent.replaceState` can replace between runs: the transcript (compacted, edited, a
 * branch), the system prompt, the model, the tools. A field left out stays as it is.
 *
 * pi-agent-core's `state.thinkingLevel` has no field here: in rxagent the model carries how hard
 * it thinks (`fromPiAi(model, { reasoning: "high" })`), so switching it is replacing `model`.
 * @example agent.replaceState({ messages: agent.messages.slice(-20), systemPrompt: "Be brief." })
 */
export interface AgentStatePatch {
  /** The new transcript; the agent keeps a copy of the array (the messages themselves are shared). */
  messages?: readonly AgentMessage[];
  systemPrompt?: string;
  model?: Model;
  tools?: AgentTool[];
}

const patchFields: ReadonlySet<string> = new Set(["messages", "systemPrompt", "model", "tools"]);

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
    throw new InvalidConfigError("patch", `Agent.replaceState takes an object such as { messages, systemPrompt, model, tools }, got ${patch === null ? "null" : typeof patch}.`);
  }
  for (const field of Object.keys(patch)) {
    if (patchFields.has(field)) continue;
    const hint = field === "thinkingLevel" ? " In rxagent the model carries the thinking level: replace the model, e.g. fromPiAi(model, { reasoning })." : "";
    throw new InvalidConfigError(field, `Agent.replaceState replaces messages, systemPrompt, model and tools, not ${field}.${hint}`);
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

/**
 * Makes `messages` the store's whole transcript: in one step with `replace`, else `clear` and
 * an `append` per message. Throws what the store throws, before the agent changes anything.
 */
export function replaceStoredTranscript(store: TranscriptStore, messages: readonly AgentMessage[]): void {
  if (store.replace) return store.replace(messages);
  store.clear();
  for (const message of messages) store.append(message);
}

/** The state of an idle agent whose transcript became `messages`: totals from them, the queue counts as they were. */
export function replacedTranscriptState(state: AgentState, messages: readonly AgentMessage[]): AgentState {
  return { ...freshAgentState(messages), queuedSteering: state.queuedSteering, queuedFollowUp: state.queuedFollowUp };
}
