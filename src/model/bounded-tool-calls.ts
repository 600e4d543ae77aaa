import type { AssistantMessage, ModelEvent, ToolCall } from "../types.js";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../util/json-depth.js";
import { isPendingSnapshot } from "../util/shared-content.js";

/**
 * A nesting limit and the tool-call blocks already checked against it. Why a WeakMap: a streamed
 * call's block object is shared by every partial until it changes, so each block is walked once,
 * and a replaced one is replaced by the same copy every time. Why one per limit, shared: a
 * model call takes it once (`toolCallBoundsOf`), so an event costs no lookup of its limit, and a
 * block checked against one limit is never taken as checked against another.
 */
export interface ToolCallBounds {
  readonly limit: number;
  readonly checked: WeakMap<ToolCall, ToolCall>;
  /**
   * One model call's last content array whose every block passed unchanged (`forOneCall`): a
   * block at the same index of the next partial that is the same object passed too, with no
   * WeakMap lookup. Why: each event's partial holds every block so far, and looking each tool call
   * up per event was 14% of a Promise tool call's CPU in W2 (bench profile) and grew with the
   * square of the calls in one reply.
   */
  passedContent?: readonly unknown[] | undefined;
}

/** Bounds for one model call: the shared limit and checked blocks, and a memo of its own (never shared: it holds the call's message). */
export function forOneCall(bounds: ToolCallBounds): ToolCallBounds {
  return { limit: bounds.limit, checked: bounds.checked, passedContent: undefined };
}

/** The shared bounds for `limit` (`maxJsonDepth`). */
export function toolCallBoundsOf(limit: number): ToolCallBounds {
  if (limit === MAX_JSON_DEPTH) return DEFAULT_BOUNDS;
  let bounds = boundsByLimit.get(limit);
  if (bounds === undefined) boundsByLimit.set(limit, (bounds = { limit, checked: new WeakMap() }));
  return bounds;
}

const DEFAULT_BOUNDS: ToolCallBounds = { limit: MAX_JSON_DEPTH, checked: new WeakMap() };
// A handful of entries at most: a limit is a config value, checked to be an integer up to 1000.
const boundsByLimit = new Map<number, ToolCallBounds>();

/**
 * The tool call as the loop may pass it on: itself, or, when its `arguments` nest deeper than
 * `bounds.limit`, a copy with `arguments: {}` and the model's text in `rawArguments`, which
 * validation refuses with "arguments nest deeper than N levels" (validate-arguments.ts).
 *
 * Why here, where a model's events enter the loop: every event reaches `events$` subscribers,
 * the wire encoder, transcripts and `Value.Clone`, and each of them recurses; 6,000 levels of
 * `[` took a server down (issue 27).
 */
export function boundedToolCall(block: ToolCall, bounds: ToolCallBounds = DEFAULT_BOUNDS): ToolCall {
  let bounded = bounds.checked.get(block);
  if (bounded === undefined) {
    bounded = nestsDeeperThan(block.arguments, bounds.limit) ? { ...block, arguments: {}, rawArguments: rawTextOf(block, bounds.limit) } : block;
    bounds.checked.set(block, bounded);
  }
  return bounded;
}

/**
 * The message with every tool call bounded; the same object when none needed it.
 *
 * A snapshot whose content is not built yet (SharedContent) comes from AssistantMessageDraft,
 * whose arguments never nest deeper than `MAX_JSON_DEPTH` (its scanner gives up past it): under
 * a limit at least that high it passes as it is. Why: walking its blocks would build its array
 * on every event, the cost in the square of the block count that the snapshot saves.
 */
export function boundedMessage<T extends AssistantMessage | undefined>(message: T, bounds: ToolCallBounds = DEFAULT_BOUNDS): T {
  if (typeof message !== "object" || message === null) return message;
  if (bounds.limit >= MAX_JSON_DEPTH && isPendingSnapshot(message)) return message;
  const blocks = message.content;
  if (!Array.isArray(blocks)) return message;
  const passed = bounds.passedContent;
  // The partial of the event before, again (a provider that sends one array with every event, or
  // a delta that changed no block): every block passed, with no block read. Why: this loop was
  // 7.6% of bench W2's samples (profile.ts W2promise, 8 calls per reply, 2026-12-03), and there
  // each call's `toolcall_delta` repeats its `toolcall_start`'s partial.
  if (passed === blocks) return message;
  let content: AssistantMessage["content"] | undefined;
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index];
    if (passed !== undefined && passed[index] === block) continue;
    if (typeof block !== "object" || block === null || block.type !== "toolCall") continue;
    const bounded = boundedToolCall(block, bounds);
    if (bounded === block) continue;
    content ??= [...blocks];
    content[index] = bounded;
  }
  if (content !== undefined) return { ...message, content };
  // Only bounds made by `forOneCall` have the key: the shared ones keep no message alive.
  if ("passedContent" in bounds) bounds.passedContent = blocks;
  return message;
}

/** The event with its messages and tool call bounded; the same object when none needed it. */
export function boundedModelEvent(event: ModelEvent, bounds: ToolCallBounds = DEFAULT_BOUNDS): ModelEvent {
  switch (event.type) {
    case "done": {
      const message = boundedMessage(event.message, bounds);
      return message === event.message ? event : { ...event, message };
    }
    case "error": {
      const error = boundedMessage(event.error, bounds);
      return error === event.error ? event : { ...event, error };
    }
    case "toolcall_end": {
      const partial = boundedMessage(event.partial, bounds);
      // The call is the block its partial holds at `contentIndex`: when that block has just passed
      // (`passedContent`), it needs no second lookup in `checked` (a WeakMap get per tool call, bench W2).
      const toolCall = typeof event.toolCall === "object" && event.toolCall !== null && bounds.passedContent?.[event.contentIndex] !== event.toolCall ? boundedToolCall(event.toolCall, bounds) : event.toolCall;
      return partial === event.partial && toolCall === event.toolCall ? event : { ...event, partial, toolCall };
    }
    default: {
      const partial = boundedMessage(event.partial, bounds);
      return partial === event.partial ? event : { ...event, partial };
    }
  }
}

/**
 * The model's own text when it sent one that is too deep; else a stand-in that nests one level
 * past the limit, so validation names the cause. Why not the arguments as JSON: writing them
 * out is the very recursion that overflows.
 */
function rawTextOf(block: ToolCall, limit: number): string {
  if (typeof block.rawArguments === "string" && block.rawArguments !== "") return block.rawArguments;
  return "[".repeat(limit + 1) + "]".repeat(limit + 1);
}
