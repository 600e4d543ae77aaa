import type { AssistantMessage, ModelEvent, ToolCall } from "../types.js";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../util/json-depth.js";
import { isPendingSnapshot } from "../util/shared-content.js";

/**
 * One model call's nesting limit, and the tool-call blocks that were checked against it, by
 * content index: a block that is the same object as the one checked at its index last time
 * passes (or is replaced) again without a walk.
 *
 * Why by index and per call, not a shared WeakMap of every block ever checked: each of a
 * reply's events names the one block it changes (`contentIndex`), so an event costs one
 * comparison, where the WeakMap took a lookup per new block and an insert, and held an
 * ephemeron for every GC to trace; and the memo dies with its call. Bench W2 did not move
 * (bench/ab.ts, 7-9 rounds: 0.94x-1.03x; its replayed blocks are the same objects every run, so
 * there the WeakMap's lookups all hit). Bounding as a whole is about a tenth of W2's time
 * (0.88x-0.90x with it off), most of it reading each event's partial, cold in the cache there.
 */
export class ToolCallBounds {
  /**
   * At `2 * index` the block last checked at that content index, at `2 * index + 1` what it
   * became (itself when it passed). Made at the first tool call: a call waiting for its model
   * holds no array (bench W5).
   */
  private checked: unknown[] | undefined = undefined;
  /**
   * Whether every event's message is checked whole: from the start when asked (a consumer that
   * cannot rely on the events' snapshots), else once a block was replaced (every partial after
   * holds it).
   */
  checksWhole: boolean;

  constructor(
    readonly limit: number = MAX_JSON_DEPTH,
    checksWhole = false,
  ) {
    this.checksWhole = checksWhole;
  }

  /** The block as the loop may pass it on, walking it only when it is not the object last checked at `index`. */
  blockAt(index: number, block: ToolCall): ToolCall {
    const checked = (this.checked ??= []);
    if (checked[2 * index] === block) return checked[2 * index + 1] as ToolCall;
    const bounded = boundedToolCall(block, this.limit);
    checked[2 * index] = block;
    checked[2 * index + 1] = bounded;
    if (bounded !== block) this.checksWhole = true;
    return bounded;
  }
}

/**
 * The tool call as the loop may pass it on: itself, or, when its `arguments` nest deeper than
 * `limit`, a copy with `arguments: {}` and the model's text in `rawArguments`, which validation
 * refuses with "arguments nest deeper than N levels" (validate-arguments.ts).
 *
 * Why where a model's events enter the loop: every event reaches `events$` subscribers, the
 * wire encoder, transcripts and `Value.Clone`, and each of them recurses; 6,000 levels of `[`
 * took a server down (issue 27).
 */
export function boundedToolCall(block: ToolCall, limit: number = MAX_JSON_DEPTH): ToolCall {
  return nestsDeeperThan(block.arguments, limit) ? { ...block, arguments: {}, rawArguments: rawTextOf(block, limit) } : block;
}

/**
 * The message with every tool call bounded; the same object when none needed it.
 *
 * A snapshot whose content is not built yet (SharedContent) comes from AssistantMessageDraft,
 * whose arguments never nest deeper than `MAX_JSON_DEPTH` (its scanner gives up past it): under
 * a limit at least that high it passes as it is. Why: walking its blocks would build its array
 * on every event, the cost in the square of the block count that the snapshot saves.
 */
export function boundedMessage<T extends AssistantMessage | undefined>(message: T, bounds: ToolCallBounds = new ToolCallBounds()): T {
  if (typeof message !== "object" || message === null) return message;
  if (bounds.limit >= MAX_JSON_DEPTH && isPendingSnapshot(message)) return message;
  const blocks = message.content;
  if (!Array.isArray(blocks)) return message;
  let content: AssistantMessage["content"] | undefined;
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index];
    if (typeof block !== "object" || block === null || block.type !== "toolCall") continue;
    const bounded = bounds.blockAt(index, block);
    if (bounded === block) continue;
    content ??= [...blocks];
    content[index] = bounded;
  }
  return content === undefined ? message : { ...message, content };
}

/**
 * The event with its tool calls bounded; the same object when none needed it.
 *
 * `start`, `done` and `error` have every block checked, the final message afresh. Any other
 * event only the block at its `contentIndex`: an event changes that block alone (ModelEvent's
 * contract), and every other block is the object an earlier event brought and had checked. An
 * event without a usable `contentIndex`, and every event after a block was replaced, has every
 * block checked.
 */
export function boundedModelEvent(event: ModelEvent, bounds: ToolCallBounds = new ToolCallBounds()): ModelEvent {
  switch (event.type) {
    case "start": {
      const partial = boundedMessage(event.partial, bounds);
      return partial === event.partial ? event : { ...event, partial };
    }
    // The final message afresh, each block walked again: it is what the transcript, the stores
    // and the tools keep, so it must hold even for a provider that changed a block in place
    // after an event had it checked (one walk per call, cheap beside the call).
    case "done": {
      const message = boundedMessage(event.message, new ToolCallBounds(bounds.limit));
      return message === event.message ? event : { ...event, message };
    }
    case "error": {
      const error = boundedMessage(event.error, new ToolCallBounds(bounds.limit));
      return error === event.error ? event : { ...event, error };
    }
    case "toolcall_start":
    case "toolcall_delta":
    case "toolcall_end": {
      const partial = boundedBlockAt(event.partial, event.contentIndex, bounds);
      if (event.type !== "toolcall_end") return partial === event.partial ? event : { ...event, partial };
      const toolCall = typeof event.toolCall === "object" && event.toolCall !== null ? bounds.blockAt(event.contentIndex, event.toolCall) : event.toolCall;
      return partial === event.partial && toolCall === event.toolCall ? event : { ...event, partial, toolCall };
    }
    default: {
      // Text and thinking change no tool call; only a block replaced before needs replacing again.
      if (!bounds.checksWhole) return event;
      const partial = boundedMessage(event.partial, bounds);
      return partial === event.partial ? event : { ...event, partial };
    }
  }
}

/**
 * Every tool call of the event's message and its `toolCall` checked afresh, none taken as
 * checked before. For a consumer that cannot rely on the events' snapshots (recordingModel: a
 * provider may change the message it handed out).
 */
export function wholeBoundedModelEvent(event: ModelEvent, limit: number): ModelEvent {
  return boundedModelEvent(event, new ToolCallBounds(limit, true));
}

/** The partial with the tool call at `index` bounded; the whole message checked when `index` names no block. */
function boundedBlockAt(partial: AssistantMessage, index: number, bounds: ToolCallBounds): AssistantMessage {
  if (typeof partial !== "object" || partial === null) return partial;
  if (bounds.limit >= MAX_JSON_DEPTH && isPendingSnapshot(partial)) return partial;
  const blocks = partial.content;
  if (bounds.checksWhole || !Array.isArray(blocks) || !Number.isInteger(index) || index < 0 || index >= blocks.length) return boundedMessage(partial, bounds);
  const block = blocks[index];
  if (typeof block !== "object" || block === null || block.type !== "toolCall") return partial;
  const bounded = bounds.blockAt(index, block);
  if (bounded === block) return partial;
  const content = [...blocks];
  content[index] = bounded;
  return { ...partial, content };
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
