import type { AssistantMessage as PiAiAssistantMessage, AssistantMessageEvent } from "@mariozechner/pi-ai";
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

  /**
   * The rxagent event for a pi-ai event, or `undefined` for one that carries nothing, or that
   * names a block by a `contentIndex` that is no index of the content or of the block after it.
   * Why: a stream other than pi-ai's providers (`stream`, a proxy's `streamFn`) may send any
   * index, and an index of 10^9 grew the content to it: the process ran out of memory.
   */
  next(event: AssistantMessageEvent): ModelEvent | undefined {
    if ("contentIndex" in event && !isBlockIndex(event.contentIndex, this.content.length)) return undefined;
    switch (event.type) {
      case "start":
        return { type: "start", partial: this.snapshot(event.partial) };
      case "text_start":
        return this.open(event, { type: "text", text: "" });
      case "thinking_start": {
        const live = event.partial.content[event.contentIndex];
        const redacted = live?.type === "thinking" && live.redacted === true;
        return this.open(event, redacted ? copyBlock(live) : { type: "thinking", thinking: "" });
      }
      case "toolcall_start": {
        const live = event.partial.content[event.contentIndex];
        const call: ToolCall = { type: "toolCall", id: live?.type === "toolCall" ? live.id : "", name: live?.type === "toolCall" ? live.name : "", arguments: {} };
        this.streamedArguments.set(event.contentIndex, { parser: new PartialJsonParser(), guessedLength: 0 });
        return this.open(event, call);
      }
      case "text_delta":
      case "thinking_delta":
      case "toolcall_delta": {
        const block = this.content.at(event.contentIndex);
        if (event.delta === "" || block === undefined) return undefined;
        this.content.set(event.contentIndex, appended(block, event.delta, this.streamedArguments.get(event.contentIndex)));
        return { ...event, partial: this.snapshot(event.partial) };
      }
      case "text_end":
      case "thinking_end": {
        const live = event.partial.content[event.contentIndex];
        if (live !== undefined) this.content.set(event.contentIndex, copyBlock(live));
        this.content.close(event.contentIndex);
        return { ...event, partial: this.snapshot(event.partial) };
      }
      case "toolcall_end": {
        const toolCall = copyBlock(event.toolCall) as ToolCall;
        this.content.set(event.contentIndex, toolCall);
        this.content.close(event.contentIndex);
        this.streamedArguments.delete(event.contentIndex);
        return { type: "toolcall_end", contentIndex: event.contentIndex, toolCall, partial: this.snapshot(event.partial) };
      }
      case "done":
        return { type: "done", reason: event.reason, message: finalCopy(event.message) };
      case "error":
        return { type: "error", reason: event.reason, error: finalCopy(event.error) };
    }
  }

  private open(event: { type: "text_start" | "thinking_start" | "toolcall_start"; contentIndex: number; partial: PiAiAssistantMessage }, block: Block): ModelEvent {
    this.content.set(event.contentIndex, block);
    return { type: event.type, contentIndex: event.contentIndex, partial: this.snapshot(event.partial) };
  }

  private snapshot(live: PiAiAssistantMessage): AssistantMessage {
    return this.content.snapshotInto({ ...live, content: [], usage: { ...live.usage, cost: { ...live.usage.cost } } });
  }
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

/** pi-ai's final message, copied into rxagent's shapes. */
function finalCopy(message: PiAiAssistantMessage): AssistantMessage {
  return { ...message, content: message.content.map(copyBlock), usage: { ...message.usage, cost: { ...message.usage.cost } } };
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
