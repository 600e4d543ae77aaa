import type { AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall, Usage } from "../types/messages.js";
import { emptyUsage } from "../types/messages.js";
import type { ModelEvent } from "../types/model.js";
import { isGuessDue, objectOrEmpty, parseToolArguments } from "./partial-json.js";
import { PartialJsonParser } from "./partial-json-parser.js";
import { textNestsDeeperThan } from "../util/json-depth.js";
import { SharedContent } from "../util/shared-content.js";
import { generatedCallId } from "./generated-call-id.js";

type Block = TextContent | ThinkingContent | ToolCall;

/** What every message of one model call shares. */
export interface AssistantMessageOrigin {
  api: string;
  provider: string;
  model: string;
  timestamp: number;
}

/**
 * The assistant message being streamed, turned into `ModelEvent`s with immutable snapshots.
 *
 * Both accumulators drive it, so the event grammar (start, block start/delta/end, one terminal
 * event) and the copy-on-write rules live in one place. Every event gets a new message object
 * whose content is its own (see SharedContent: the array is built when first read); only the
 * block that changed is a new object, so consumers may keep any `partial` they saw without it
 * changing under them.
 */
export class AssistantMessageDraft {
  /** The blocks so far; the open ones (still streaming) are those `content.isOpen` names. */
  private readonly content = new SharedContent<Block>();
  /** Each tool call's arguments as read so far (text and value), by content index. */
  private readonly argumentParsers = new Map<number, PartialJsonParser>();
  /** How long each call's arguments were when last parsed for the partials. */
  private readonly parsedLengths = new Map<number, number>();
  private usage: Usage = emptyUsage();
  private responseId: string | undefined;
  private responseModel: string | undefined;
  private started = false;
  private ended = false;

  constructor(private readonly origin: AssistantMessageOrigin) {}

  get isEnded(): boolean {
    return this.ended;
  }

  get hasToolCalls(): boolean {
    for (let index = 0; index < this.content.length; index++) if (this.content.at(index)?.type === "toolCall") return true;
    return false;
  }

  /** Emits `start` once; later calls return nothing. */
  start(): ModelEvent[] {
    if (this.started) return [];
    this.started = true;
    return [{ type: "start", partial: this.snapshot() }];
  }

  setUsage(usage: Usage): void {
    this.usage = usage;
  }

  /** Records what the server reported; the first non-empty values win. */
  setResponse(id: string | undefined, model: string | undefined): void {
    if (!this.responseId && id) this.responseId = id;
    if (!this.responseModel && model && model !== this.origin.model) this.responseModel = model;
  }

  isOpen(contentIndex: number): boolean {
    return this.content.isOpen(contentIndex);
  }

  openIndices(): number[] {
    return this.content.openIndices();
  }

  openText(textSignature?: string): { index: number; events: ModelEvent[] } {
    const block: TextContent = textSignature ? { type: "text", text: "", textSignature } : { type: "text", text: "" };
    return this.openBlock(block, "text_start");
  }

  openThinking(): { index: number; events: ModelEvent[] } {
    return this.openBlock({ type: "thinking", thinking: "" }, "thinking_start");
  }

  openToolCall(id: string, name: string): { index: number; events: ModelEvent[] } {
    const result = this.openBlock({ type: "toolCall", id, name, arguments: {} }, "toolcall_start");
    this.argumentParsers.set(result.index, new PartialJsonParser());
    return result;
  }

  appendText(index: number, delta: string): ModelEvent[] {
    const block = this.blockAt(index, "text");
    if (!block || delta === "") return [];
    this.replace(index, { ...block, text: block.text + delta });
    return [{ type: "text_delta", contentIndex: index, delta, partial: this.snapshot() }];
  }

  appendThinking(index: number, delta: string): ModelEvent[] {
    const block = this.blockAt(index, "thinking");
    if (!block || delta === "") return [];
    this.replace(index, { ...block, thinking: block.thinking + delta });
    return [{ type: "thinking_delta", contentIndex: index, delta, partial: this.snapshot() }];
  }

  /**
   * Adds an argument fragment; the block's `arguments` become the best guess so far when one is
   * due (`isGuessDue`: every fragment up to 4 KiB, then each time they have doubled).
   * `toolcall_end` always carries the whole value.
   */
  appendToolArguments(index: number, delta: string): ModelEvent[] {
    const block = this.blockAt(index, "toolCall");
    const parser = this.argumentParsers.get(index);
    if (!block || !parser || delta === "") return [];
    parser.append(delta);
    const length = parser.text.length;
    if (isGuessDue(length, this.parsedLengths.get(index) ?? 0)) {
      this.parsedLengths.set(index, length);
      this.replace(index, { ...block, arguments: objectOrEmpty(parser.value()) });
    }
    return [{ type: "toolcall_delta", contentIndex: index, delta, partial: this.snapshot() }];
  }

  /** The thinking text of a block so far ("" for other blocks). */
  thinkingAt(index: number): string {
    const block = this.content.at(index);
    return block?.type === "thinking" ? block.thinking : "";
  }

  /** Fills in an id or name that arrived after the call opened (no event: nothing streamed). */
  updateToolCall(index: number, patch: { id?: string; name?: string }): void {
    const block = this.blockAt(index, "toolCall");
    if (!block) return;
    const id = block.id || patch.id || "";
    const name = block.name || patch.name || "";
    if (id !== block.id || name !== block.name) this.replace(index, { ...block, id, name });
  }

  /** Sets provider data on a thinking block, e.g. the encrypted reasoning item. */
  updateThinking(index: number, patch: { thinking?: string; thinkingSignature?: string }): void {
    const block = this.blockAt(index, "thinking");
    if (block) this.replace(index, { ...block, ...patch });
  }


  /**
   * Closes a block. For a tool call, `finalArguments` (when the server sent the whole string)
   * replaces the streamed fragments.
   */
  close(index: number, finalArguments?: string): ModelEvent[] {
    const block = this.content.at(index);
    if (!this.content.isOpen(index) || !block) return [];
    // Replaced while still open: changing a closed block would fork the shared content.
    if (block.type === "toolCall") this.replace(index, this.finalToolCall(index, block, finalArguments));
    this.content.close(index);
    // A closed call's text and parser are not read again: a reply of 10,000 calls kept them all.
    this.argumentParsers.delete(index);
    this.parsedLengths.delete(index);
    const closed = this.content.at(index) as Block;
    switch (closed.type) {
      case "text":
        return [{ type: "text_end", contentIndex: index, content: closed.text, partial: this.snapshot() }];
      case "thinking":
        return [{ type: "thinking_end", contentIndex: index, content: closed.thinking, partial: this.snapshot() }];
      case "toolCall":
        return [{ type: "toolcall_end", contentIndex: index, toolCall: closed, partial: this.snapshot() }];
    }
  }

  /** The call as it ends: arguments parsed in full from `finalArguments`, or the streamed ones. */
  private finalToolCall(index: number, block: ToolCall, finalArguments: string | undefined): ToolCall {
    const streamed = finalArguments === undefined ? this.argumentParsers.get(index) : undefined;
    const raw = finalArguments ?? streamed?.text ?? "";
    const complete = streamed ? streamedArguments(streamed) : completeArguments(raw);
    const toolCall: ToolCall = {
      ...block,
      // Some servers send no id at all; the loop still needs one to pair the result.
      id: block.id || generatedCallId(),
      arguments: complete ?? (streamed ? objectOrEmpty(streamed.value()) : parseToolArguments(raw)),
    };
    // The raw text stays when the arguments could not come from it: not an object, or nested
    // too deep (then `arguments` is `{}` and validation refuses the call with a clear result).
    if (complete === undefined) toolCall.rawArguments = raw;
    return toolCall;
  }

  /**
   * Closes a tool call whose arguments so far are a whole JSON object (nothing more can be added
   * to it and stay valid); emits nothing otherwise. Why: a provider that streams calls one after
   * another never says when one ends, and a call ended early can start early (eager tools).
   */
  closeIfComplete(index: number): ModelEvent[] {
    const parser = this.argumentParsers.get(index);
    if (!this.content.isOpen(index) || parser === undefined || !isWholeObject(parser)) return [];
    return this.close(index);
  }

  closeAll(): ModelEvent[] {
    return this.openIndices().flatMap((index) => this.close(index));
  }

  /** Closes what is open and emits `done`. */
  finish(reason: Extract<StopReason, "stop" | "length" | "toolUse">): ModelEvent[] {
    if (this.ended) return [];
    const events = [...this.start(), ...this.closeAll()];
    this.ended = true;
    return [...events, { type: "done", reason, message: this.snapshot({ stopReason: reason }) }];
  }

  /** Emits `error`; open blocks stay as they are in the final message (no `*_end` events). */
  fail(reason: Extract<StopReason, "error" | "aborted">, errorMessage: string): ModelEvent[] {
    if (this.ended) return [];
    const events = this.start();
    this.ended = true;
    const error = this.snapshot({ stopReason: reason, errorMessage });
    return [...events, { type: "error", reason, error }];
  }

  private openBlock(block: Block, type: "text_start" | "thinking_start" | "toolcall_start"): { index: number; events: ModelEvent[] } {
    const events = this.start();
    const index = this.content.push(block);
    events.push({ type, contentIndex: index, partial: this.snapshot() });
    return { index, events };
  }

  private blockAt<T extends Block["type"]>(index: number, type: T): Extract<Block, { type: T }> | undefined {
    if (!this.content.isOpen(index)) return undefined;
    const block = this.content.at(index);
    return block?.type === type ? (block as Extract<Block, { type: T }>) : undefined;
  }

  // In place for an open block: every event's partial keeps the blocks it saw (`snapshot`).
  private replace(index: number, block: Block): void {
    this.content.set(index, block);
  }

  /** The message now; a final one (`end`) gets a plain content array, as transcripts keep it. */
  private snapshot(end?: { stopReason: StopReason; errorMessage?: string }): AssistantMessage {
    // Built key by key, `content` where it belongs: a streamed event's content is added by
    // SharedContent without a copy of the message (addContentTo).
    const message = { role: "assistant" } as AssistantMessage;
    if (end) message.content = this.content.toArray();
    else this.content.addContentTo(message);
    message.api = this.origin.api;
    message.provider = this.origin.provider;
    message.model = this.origin.model;
    message.usage = this.usage;
    message.stopReason = end?.stopReason ?? "stop";
    message.timestamp = this.origin.timestamp;
    if (this.responseModel) message.responseModel = this.responseModel;
    if (this.responseId) message.responseId = this.responseId;
    if (end?.errorMessage !== undefined) message.errorMessage = end.errorMessage;
    return message;
  }

}

/**
 * The arguments when the streamed text is a whole JSON object within the depth limit (an empty
 * text counts as `{}`), else `undefined`: the parser's own value, no parse of the text again (at
 * the end of a long argument a pass over it is as dear as the streaming before it).
 */
function streamedArguments(parser: PartialJsonParser): Record<string, unknown> | undefined {
  return parser.completeObject ?? (parser.text.trim() === "" ? {} : undefined);
}

/** The arguments when `raw` is a whole JSON object within the depth limit (an empty text counts as `{}`), else `undefined`. */
function completeArguments(raw: string): Record<string, unknown> | undefined {
  if (raw.trim() === "") return {};
  if (textNestsDeeperThan(raw)) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when the streamed text is a whole JSON object. Text nested past the parser's limit is
 * judged by `JSON.parse` (it parses any depth): such a call still ends here, and its arguments
 * are refused when it closes.
 */
function isWholeObject(parser: PartialJsonParser): boolean {
  if (parser.completeObject !== undefined) return true;
  if (!parser.nestsTooDeep) return false;
  try {
    const value: unknown = JSON.parse(parser.text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
