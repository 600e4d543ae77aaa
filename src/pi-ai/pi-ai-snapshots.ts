import type { AssistantMessage as PiAiAssistantMessage, AssistantMessageEvent } from "@mariozechner/pi-ai";
import { generatedCallId } from "../model/generated-call-id.js";
import { isPlainObject } from "../model/json-grammar.js";
import { isGuessDue, objectOrEmpty } from "../model/partial-json.js";
import { PartialJsonParser } from "../model/partial-json-parser.js";
import { SharedContent } from "../util/shared-content.js";
import type { AssistantMessage, TextContent, ThinkingContent, ToolCall } from "../types/messages.js";
import type { ModelEvent } from "../types/model.js";

type Block = TextContent | ThinkingContent | ToolCall;
type PiAiBlock = PiAiAssistantMessage["content"][number];

/**
 * Turns pi-ai's events into rxagent `ModelEvent`s whose `partial` is a snapshot of the message
 * as it stood at that event.
 *
 * Why not copy pi-ai's `partial`: pi-ai hands every event the same message object and keeps
 * changing it, and its events reach a consumer through an async queue, so by the time an event is
 * read the object may already hold later deltas. The snapshots are therefore rebuilt from the
 * events themselves (each delta appended to its block), and a block is copied from pi-ai's
 * message only at its `*_end` (pi-ai never changes a block after that; this brings signatures,
 * redacted data and the parsed tool arguments) and at `start` of a redacted thinking block (which
 * arrives whole). Usage and the response id are copied from pi-ai's message on every event: they
 * may run ahead of the deltas, never behind. The final message is pi-ai's, copied.
 *
 * Every event gets a new message; only a block that changed is a new object, and the content
 * is shared between the snapshots (SharedContent: a message of 128 blocks or more builds its
 * array when read; copying it per event made a reply of n tool calls cost n²). Only the fields of rxagent's shapes are copied, so pi-ai's scratch fields (`index`,
 * `partialJson`, `partialArgs`, ...) stay behind. A delta of no text is dropped (Gemini sends an
 * empty part to carry a thought signature; the signature shows at the block's end).
 */
export class PiAiSnapshots {
  private readonly content = new SharedContent<Block>();
  /** The arguments of each open tool call as read so far, and their length at the last guess, by content index. */
  private readonly streamedArguments = new Map<number, StreamedArguments>();
  /** The fields of the last event's message that was an object. */
  private fields: Record<string, unknown> | undefined;
  /** Whether an event was passed on: a `start` after it is left out. */
  private started = false;

  /**
   * The rxagent event for a pi-ai event, or `undefined` for one that carries nothing or breaks
   * the event grammar: a second `start`, a block that opens anywhere but at the next index, a
   * delta or an end for no open block of its kind, a delta that is no text, an event that is no
   * object. Why: a stream other than pi-ai's providers (`stream`, a proxy's `streamFn`) may send
   * anything, and an index of 10^9 grew the content to it: the process ran out of memory. A
   * `toolcall_end` without a usable `toolCall` closes the call as streamed; a `done` without a
   * usable message ends as an error with what streamed.
   */
  next(received: AssistantMessageEvent): ModelEvent | undefined {
    if (typeof received !== "object" || received === null) return undefined;
    // Any event passed on counts as the start: `fromPiAi` sends a `start` of its own before an event that comes first.
    if (received.type === "start" && this.started) return undefined;
    const event = this.translated(received);
    if (event !== undefined) this.started = true;
    return event;
  }

  private translated(event: AssistantMessageEvent): ModelEvent | undefined {
    switch (event.type) {
      case "start":
        return { type: "start", partial: this.snapshot(event.partial) };
      case "text_start":
        return this.open(event, { type: "text", text: "" });
      case "thinking_start": {
        const live = liveBlockAt(event.partial, event.contentIndex);
        return this.open(event, live?.type === "thinking" && live.redacted === true ? copyBlock(live) : { type: "thinking", thinking: "" });
      }
      case "toolcall_start": {
        const live = liveBlockAt(event.partial, event.contentIndex);
        const call: ToolCall = { type: "toolCall", id: live?.type === "toolCall" && typeof live.id === "string" ? live.id : "", name: live?.type === "toolCall" && typeof live.name === "string" ? live.name : "", arguments: {} };
        const opened = this.open(event, call);
        if (opened !== undefined) this.streamedArguments.set(event.contentIndex, { parser: new PartialJsonParser(), guessedLength: 0 });
        return opened;
      }
      case "text_delta":
      case "thinking_delta":
      case "toolcall_delta": {
        const block = this.openBlockAt(event.contentIndex, event.type);
        if (block === undefined || typeof event.delta !== "string" || event.delta === "") return undefined;
        this.content.set(event.contentIndex, appended(block, event.delta, this.streamedArguments.get(event.contentIndex)));
        return { type: event.type, contentIndex: event.contentIndex, delta: event.delta, partial: this.snapshot(event.partial) };
      }
      case "text_end":
      case "thinking_end": {
        const block = this.openBlockAt(event.contentIndex, event.type);
        if (block === undefined) return undefined;
        const live = liveBlockAt(event.partial, event.contentIndex);
        if (live?.type === block.type) this.content.set(event.contentIndex, copyBlock(live));
        this.content.close(event.contentIndex);
        const ended = this.content.at(event.contentIndex) as TextContent | ThinkingContent;
        return { type: event.type, contentIndex: event.contentIndex, content: ended.type === "text" ? ended.text : ended.thinking, partial: this.snapshot(event.partial) } as ModelEvent;
      }
      case "toolcall_end": {
        const block = this.openBlockAt(event.contentIndex, event.type);
        if (block === undefined) return undefined;
        const ended = isBlock(event.toolCall) && event.toolCall.type === "toolCall" ? (copyBlock(event.toolCall) as ToolCall) : (block as ToolCall);
        // A call with no id: its result would have none, as in AssistantMessageDraft.
        const toolCall = typeof ended.id === "string" && ended.id !== "" ? ended : { ...ended, id: generatedCallId() };
        this.content.set(event.contentIndex, toolCall);
        this.content.close(event.contentIndex);
        this.streamedArguments.delete(event.contentIndex);
        return { type: "toolcall_end", contentIndex: event.contentIndex, toolCall, partial: this.snapshot(event.partial) };
      }
      case "done":
        return isPlainObject(event.message) ? { type: "done", reason: event.reason, message: this.finalCopy(event.message) } : this.failedEnd("pi-ai's done event carried no message");
      case "error":
        return isPlainObject(event.error) ? { type: "error", reason: event.reason, error: this.finalCopy(event.error) } : this.failedEnd("pi-ai's error event carried no message");
      default:
        return undefined;
    }
  }

  /** The `*_start` event, or `undefined` when the block would not open at the next index. */
  private open(event: { type: "text_start" | "thinking_start" | "toolcall_start"; contentIndex: number; partial: PiAiAssistantMessage }, block: Block): ModelEvent | undefined {
    if (event.contentIndex !== this.content.length) return undefined;
    this.content.push(block);
    return { type: event.type, contentIndex: event.contentIndex, partial: this.snapshot(event.partial) };
  }

  /** The open block at `index` of the kind the event's type names (`toolcall_delta`: a tool call), else `undefined`. */
  private openBlockAt(index: unknown, eventType: `${"text" | "thinking" | "toolcall"}_${string}`): Block | undefined {
    if (!isBlockIndex(index, this.content.length - 1) || !this.content.isOpen(index)) return undefined;
    const block = this.content.at(index);
    return block?.type === KIND_OF_EVENT[eventType.slice(0, eventType.indexOf("_")) as keyof typeof KIND_OF_EVENT] ? block : undefined;
  }

  /** The message's fields now, the content as streamed; the last usable fields when `live` is none. */
  private snapshot(live: unknown): AssistantMessage {
    if (isPlainObject(live)) this.fields = live;
    const fields = this.fields ?? {};
    return this.content.snapshotInto({ ...fields, content: [], usage: usageCopy(fields.usage) } as unknown as AssistantMessage);
  }

  /** pi-ai's final message, copied into rxagent's shapes; its content as streamed when it has none that is an array. */
  private finalCopy(message: Record<string, unknown>): AssistantMessage {
    const content = Array.isArray(message.content) ? message.content.filter(isBlock).map(copyBlock) : this.content.toArray();
    return { ...message, content, usage: usageCopy(message.usage) } as unknown as AssistantMessage;
  }

  private failedEnd(errorMessage: string): ModelEvent {
    return { type: "error", reason: "error", error: { ...this.finalCopy(this.fields ?? {}), content: this.content.toArray(), stopReason: "error", errorMessage } };
  }
}

const KIND_OF_EVENT = { text: "text", thinking: "thinking", toolcall: "toolCall" } as const;

/** A block rxagent has a shape for (text, thinking, a tool call), as pi-ai sends it. */
function isBlock(value: unknown): value is PiAiBlock {
  return isPlainObject(value) && (value.type === "text" || value.type === "thinking" || value.type === "toolCall");
}

/** The block at `index` of pi-ai's live message, when the message and the block are objects. */
function liveBlockAt(live: unknown, index: unknown): PiAiBlock | undefined {
  if (!isPlainObject(live) || !Array.isArray(live.content) || typeof index !== "number") return undefined;
  const block: unknown = live.content[index];
  return isBlock(block) ? block : undefined;
}

/** A copy of pi-ai's usage (and its cost), or of nothing when it is not an object: the loop makes every count usable. */
function usageCopy(usage: unknown): AssistantMessage["usage"] {
  const fields = isPlainObject(usage) ? usage : {};
  return { ...fields, cost: { ...(isPlainObject(fields.cost) ? fields.cost : {}) } } as AssistantMessage["usage"];
}

/** True for an index of a content of `length` blocks, or of the block that would come next. */
export function isBlockIndex(index: unknown, length: number): index is number {
  return typeof index === "number" && Number.isInteger(index) && index >= 0 && index <= length;
}

/**
 * The `start` a stream that failed before pi-ai began one lacks: the message with no content,
 * not yet failed (as every provider's first partial is).
 */
export function startOf(message: AssistantMessage): ModelEvent {
  const { errorMessage: _errorMessage, ...partial } = message;
  return { type: "start", partial: { ...partial, content: [], stopReason: "stop" } };
}


interface StreamedArguments {
  parser: PartialJsonParser;
  guessedLength: number;
}

function appended(block: Block, delta: string, streamed: StreamedArguments | undefined): Block {
  switch (block.type) {
    case "text":
      return { ...block, text: block.text + delta };
    case "thinking":
      return { ...block, thinking: block.thinking + delta };
    case "toolCall": {
      // Each character read once, a new guess when one is due, as AssistantMessageDraft does (it
      // was a parse of the whole text on every fragment: time in the square of the arguments'
      // length); `toolcall_end` brings pi-ai's own parse.
      if (streamed === undefined) return block;
      streamed.parser.append(delta);
      const length = streamed.parser.text.length;
      if (!isGuessDue(length, streamed.guessedLength)) return block;
      streamed.guessedLength = length;
      return { ...block, arguments: objectOrEmpty(streamed.parser.value()) };
    }
  }
}

function copyBlock(block: PiAiBlock): Block {
  switch (block.type) {
    case "text": {
      const copy: TextContent = { type: "text", text: block.text };
      if (block.textSignature !== undefined) copy.textSignature = block.textSignature;
      return copy;
    }
    case "thinking": {
      const copy: ThinkingContent = { type: "thinking", thinking: block.thinking };
      if (block.thinkingSignature !== undefined) copy.thinkingSignature = block.thinkingSignature;
      if (block.redacted !== undefined) copy.redacted = block.redacted;
      return copy;
    }
    case "toolCall": {
      const copy: ToolCall = { type: "toolCall", id: block.id, name: block.name, arguments: block.arguments };
      if (block.thoughtSignature !== undefined) copy.thoughtSignature = block.thoughtSignature;
      return copy;
    }
  }
}
