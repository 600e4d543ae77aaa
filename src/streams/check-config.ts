import { InvalidConfigError } from "../errors.js";
import type { AgentTool, ThinkingLevel } from "../types.js";
import { HIGHEST_JSON_DEPTH, MAX_JSON_DEPTH, nestsDeeperThan, tooDeepText } from "../util/json-depth.js";

/** The fields of a run's config that are checked before the run starts. */
export interface CheckedConfig {
  model?: unknown;
  maxConcurrency?: unknown;
  convertToLlm?: unknown;
  convertMessageToLlm?: unknown;
  maxJsonDepth?: unknown;
  stopWhen?: unknown;
  thinkingLevel?: unknown;
}

/** pi-agent-core's thinking levels, in order (`ThinkingLevel`). */
export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/**
 * Throws an `InvalidConfigError` naming the field when the config cannot work: no model (e.g.
 * `models[name]` that returned undefined), a `maxConcurrency` or tool `concurrency` that is not a
 * positive integer (0 would wait forever), two tools with one name (the model could not tell
 * them apart), both `convertToLlm` and `convertMessageToLlm` (which one would win is a guess), or
 * a `maxJsonDepth` that is not an integer from 1 to 1000, a `stopWhen` that is not a function or an
 * array of functions, a `thinkingLevel` that is not one of `THINKING_LEVELS`. Why at creation: a bad config found
 * inside a subscriber would crash or hang.
 * @example checkConfig({ model, maxConcurrency: 4 }, context.tools, "agentLoop")
 */
export function checkConfig(config: CheckedConfig, tools: readonly AgentTool[] | undefined, caller: string): void {
  const model = config.model as { stream?: unknown } | undefined;
  if (typeof model !== "object" || model === null || typeof model.stream !== "function") {
    throw new InvalidConfigError("model", `${caller} needs a model with a stream() method, got ${describe(config.model)}.`);
  }
  checkConcurrency("maxConcurrency", config.maxConcurrency);
  checkJsonDepth(config.maxJsonDepth);
  checkStopWhen(config.stopWhen);
  checkThinkingLevel(config.thinkingLevel);
  if (config.convertMessageToLlm !== undefined) {
    if (typeof config.convertMessageToLlm !== "function") {
      throw new InvalidConfigError("convertMessageToLlm", `must be a function, got ${describe(config.convertMessageToLlm)}.`);
    }
    if (config.convertToLlm !== undefined) {
      throw new InvalidConfigError("convertMessageToLlm", "give either convertToLlm (the whole transcript each turn) or convertMessageToLlm (each message once), not both.");
    }
  }
  if (tools === undefined) return;
  // Why a plain loop and, for a few tools, a scan of the ones before: the Map and the callback
  // were 280 of the ~23,600 bytes a short run allocates (bench W5, every run checks its config).
  const indexByName = tools.length > scannedToolNames ? new Map<string, number>() : undefined;
  for (let index = 0; index < tools.length; index++) {
    // As forEach did: a hole in the array is not a tool.
    if (!(index in tools)) continue;
    const tool = tools[index];
    if (typeof tool?.name !== "string" || tool.name === "") {
      throw new InvalidConfigError(`tools[${index}].name`, `every tool needs a name, got ${describe(tool?.name)}.`);
    }
    const first = indexByName ? indexByName.get(tool.name) : earlierIndexOf(tools, index);
    if (first !== undefined) {
      throw new InvalidConfigError(`tools[${index}].name`, `"${tool.name}" is also the name of tools[${first}]; tool names must be unique.`);
    }
    indexByName?.set(tool.name, index);
    checkConcurrency(`tools[${index}].concurrency`, tool.concurrency);
  }
}

/**
 * Throws an `InvalidConfigError` naming the field when a run's context cannot work: not an
 * object, `messages` not an array, `tools` neither an array nor left out, `systemPrompt` neither
 * a string nor left out. Why: each failed later, inside the run, as a TypeError that named none
 * of them ("context.tools?.some is not a function", "reading 'length'").
 */
export function checkContext(context: unknown, caller: string): void {
  if (typeof context !== "object" || context === null) throw new InvalidConfigError("context", `${caller} takes a context ({ messages, tools?, systemPrompt? }), got ${describe(context)}.`);
  const { messages, tools, systemPrompt } = context as { messages?: unknown; tools?: unknown; systemPrompt?: unknown };
  if (!Array.isArray(messages)) throw new InvalidConfigError("context.messages", `must be an array of messages (empty for a new conversation), got ${describe(messages)}.`);
  if (tools !== undefined && !Array.isArray(tools)) throw new InvalidConfigError("context.tools", `must be an array of tools (or left out), got ${describe(tools)}.`);
  if (systemPrompt !== undefined && typeof systemPrompt !== "string") throw new InvalidConfigError("context.systemPrompt", `must be a string (or left out), got ${describe(systemPrompt)}.`);
}

/** Up to this many tools, a name is looked for among the tools before it rather than in a Map. */
const scannedToolNames = 16;

/** The first index before `index` of a tool named as `tools[index]` (names before it are unique and checked). */
function earlierIndexOf(tools: readonly AgentTool[], index: number): number | undefined {
  const name = tools[index]!.name;
  for (let earlier = 0; earlier < index; earlier++) if (tools[earlier]?.name === name) return earlier;
  return undefined;
}

function checkThinkingLevel(level: unknown): void {
  if (level === undefined || THINKING_LEVELS.includes(level as ThinkingLevel)) return;
  throw new InvalidConfigError("thinkingLevel", `must be one of ${THINKING_LEVELS.map((known) => `"${known}"`).join(", ")}, got ${describe(level)}.`);
}

/**
 * Throws unless `prompts` is an array of messages (a string would become one per character), each
 * one a message: an object with a `role`, a `timestamp`, and for the model's roles a `content`,
 * nested no deeper than `maxJsonDepth`. Why each element: a raw value (`["a", 42]`) would go
 * into the transcript, the store and every client, and fail later far from where it came in;
 * a message nested 6,000 deep would overflow the stack of the first of them that writes it out.
 * `field` names the array in the error (`Agent.replaceState` checks `messages`).
 * @example checkPrompts([{ role: "user", content: "hi", timestamp: 0 }], "agentLoop")
 */
export function checkPrompts(prompts: unknown, caller = "agentLoop", maxJsonDepth: number = MAX_JSON_DEPTH, field = "prompts"): void {
  if (!Array.isArray(prompts)) {
    throw new InvalidConfigError(field, `${caller} takes an array of messages, got ${describe(prompts)}. Wrap one message in [ ].`);
  }
  prompts.forEach((prompt: unknown, index) => {
    const problem = problemOfPrompt(prompt) ?? problemOfDepth(prompt, maxJsonDepth);
    if (problem !== undefined) throw new InvalidConfigError(`${field}[${index}]`, `${caller} takes messages, but ${field}[${index}] ${problem}.`);
  });
}

/**
 * What is wrong with a value read back as a message (a transcript store's line or element), or
 * undefined for a message: the shape `checkPrompts` asks of a prompt, and its depth.
 */
export function problemOfMessage(value: unknown, maxJsonDepth: number = MAX_JSON_DEPTH): string | undefined {
  return problemOfMessageShape(value) ?? problemOfDepth(value, maxJsonDepth);
}

/** What is wrong with the shape of a value taken as a message (`problemOfMessage` without the depth), or undefined for a message. */
export function problemOfMessageShape(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `is ${describe(value)}`;
  return problemOfPrompt(value);
}

/** What is wrong with one prompt element, or undefined for a message. */
function problemOfPrompt(prompt: unknown): string | undefined {
  if (typeof prompt !== "object" || prompt === null || Array.isArray(prompt)) {
    return `is ${describe(prompt)}, not a message (e.g. { role: "user", content: "…", timestamp: Date.now() }; agent.run takes a string for text)`;
  }
  const message = prompt as { role?: unknown; content?: unknown; timestamp?: unknown };
  if (typeof message.role !== "string" || message.role === "") return `has no role (role: ${describe(message.role)})`;
  if (typeof message.timestamp !== "number" || !Number.isFinite(message.timestamp)) return `has no timestamp number (timestamp: ${describe(message.timestamp)})`;
  const contentProblem = problemOfContent(message.role, message.content);
  return contentProblem === undefined ? undefined : `(role "${message.role.slice(0, 40)}") ${contentProblem}`;
}

/**
 * Why a message's own level counts: it is what the transcript, the wire and the stores write
 * out, so the limit bounds the whole walk (the message object is level 1, as a tool result's
 * `details` would be).
 */
function problemOfDepth(message: unknown, maxJsonDepth: number): string | undefined {
  return nestsDeeperThan(message, maxJsonDepth) ? `has values that ${tooDeepText(maxJsonDepth)}` : undefined;
}

/** The model's roles carry `content`: a user message text or blocks, the others blocks. Custom roles are the app's. */
function problemOfContent(role: string, content: unknown): string | undefined {
  if (role !== "user" && role !== "assistant" && role !== "toolResult") return undefined;
  if (role === "user" && typeof content === "string") return undefined;
  if (!Array.isArray(content)) return `has content ${describe(content)}, not ${role === "user" ? "a string or " : ""}an array of blocks`;
  const index = content.findIndex((block: unknown) => typeof block !== "object" || block === null || typeof (block as { type?: unknown }).type !== "string");
  return index === -1 ? undefined : `has content[${index}] ${describe(content[index])}, not a block with a type`;
}

function checkConcurrency(field: string, value: unknown): void {
  if (value === undefined || value === Infinity) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new InvalidConfigError(field, `must be a positive integer (or Infinity, or left out for no limit), got ${describe(value)}.`);
  }
}

/** "[i] has values that nest deeper than N levels" for the first message past `limit`, else undefined. */
export function tooDeepMessage(messages: readonly unknown[], limit: number): string | undefined {
  const index = messages.findIndex((message) => nestsDeeperThan(message, limit));
  return index === -1 ? undefined : `[${index}] has values that ${tooDeepText(limit)}`;
}

/**
 * Throws an `InvalidConfigError` naming the first message of a transcript given to an `Agent`
 * (`messages`, a store's, a snapshot's) nested deeper than `maxJsonDepth`. Why: the agent hands
 * its transcript to every client and store, which would overflow the stack writing it out.
 */
export function checkTranscriptDepth(messages: readonly unknown[] | undefined, maxJsonDepth: number, caller: string): void {
  const problem = messages === undefined ? undefined : tooDeepMessage(messages, maxJsonDepth);
  if (problem !== undefined) throw new InvalidConfigError(`messages${problem.slice(0, problem.indexOf("]") + 1)}`, `${caller}'s messages${problem}.`);
}

function checkStopWhen(value: unknown): void {
  if (value === undefined || typeof value === "function") return;
  if (!Array.isArray(value)) throw new InvalidConfigError("stopWhen", `must be a condition (a function) or an array of them, got ${describe(value)}.`);
  const index = value.findIndex((condition: unknown) => typeof condition !== "function");
  if (index !== -1) throw new InvalidConfigError(`stopWhen[${index}]`, `must be a condition (a function, e.g. stepCountIs(5)), got ${describe(value[index])}.`);
}

function checkJsonDepth(value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > HIGHEST_JSON_DEPTH) {
    throw new InvalidConfigError("maxJsonDepth", `must be an integer from 1 to ${HIGHEST_JSON_DEPTH} (or left out for ${MAX_JSON_DEPTH}), got ${describe(value)}.`);
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null || value === undefined || typeof value !== "object") return String(value);
  return Array.isArray(value) ? "an array" : "an object";
}
