import type { AssistantMessage } from "../types.js";
import { objectOrEmpty } from "../model/partial-json.js";
import { PartialJsonParser } from "../model/partial-json-parser.js";
import { SharedContent } from "../util/shared-content.js";

type Block = AssistantMessage["content"][number];
type Fields = Record<string, unknown>;

/** One change to a streaming assistant message; `i` names a content block, without it the message itself. */
export type MessagePatchOperation =
  /** Appends `a` to the string field `k`. */
  | { i?: number; k: string; a: string }
  /** Sets field `k` to `v`. */
  | { i?: number; k: string; v: unknown }
  /** Deletes field `k`. */
  | { i?: number; k: string; d: 1 }
  /**
   * Sets field `k` of block `i` to the argument text its `toolcall_delta`s streamed so far, parsed
   * as partial JSON (`parsePartialJson`; `{}` unless an object). Protocol 3.
   */
  | { i: number; k: string; j: 1 }
  /** Puts a whole block at `i` (a new block, or one whose type changed). */
  | { i: number; b: Block }
  /** Cuts the content to `n` blocks. */
  | { n: number };

/** The argument text a tool call (content block `i`) streamed so far. */
export interface ArgumentText {
  i: number;
  text: string;
}

/**
 * A streaming assistant message changed by delta patches, as one end of the wire holds it (the
 * server's encoder, the client's decoder). Each `apply` gives a new message object that shares
 * everything the patch did not change: unchanged blocks are the same objects, and the content of a
 * message of 128 blocks or more is a SharedContent snapshot (built when read). Why: copying the
 * content array on every frame made a reply of n tool calls cost n² block copies on each end
 * (10,000 calls: about 300 million at the client).
 *
 * It also keeps the argument text each open tool call streamed (its `toolcall_delta`s), parsed as
 * it grows, for the `j` operation: both ends derive the arguments from the text, so the wire
 * carries each fragment once instead of the re-parsed arguments (1 MB streamed in 1 KB deltas
 * sent 5.5 MB of frames with the arguments re-sent as they doubled).
 *
 * Contract: no block or fields object of a message given out is changed afterwards; a patched
 * block is a new object.
 */
export class PatchedMessage {
  /** The message's own fields (`content` is a placeholder). */
  private fields: AssistantMessage | undefined;
  private content = new SharedContent<Block>();
  /** `current` once read since the last change. */
  private message: AssistantMessage | undefined;
  /** The argument text of each tool call still streaming, by block index; dropped when it ends. */
  private readonly argumentParsers = new Map<number, PartialJsonParser>();
  /** The last value `argumentsOf` gave (or `knowArguments` took) for a block, and the text length it is the parse of. */
  private readonly knownArguments = new Map<number, { length: number; value: Record<string, unknown> }>();

  /**
   * The message as of the last `load` or `apply`; undefined when none streams. Made when read:
   * why, the server's encoder changes its message on every event and reads it only for a slow
   * client's merged frame or a snapshot.
   */
  get current(): AssistantMessage | undefined {
    if (this.message === undefined && this.fields !== undefined) this.message = this.content.snapshotInto({ ...this.fields });
    return this.message;
  }

  /** The message's own fields as of the last change (its `content` is a placeholder), or undefined when none streams. */
  get ownFields(): Readonly<AssistantMessage> | undefined {
    return this.fields;
  }

  get length(): number {
    return this.content.length;
  }

  at(index: number): Block | undefined {
    return this.content.at(index);
  }

  /** The indices of the blocks that may still change (see `load`), ascending. */
  openIndices(): number[] {
    return this.content.openIndices();
  }

  /**
   * Starts from `message`, whose blocks are used as they are (never changed: a patch replaces a
   * block). Blocks from `openFrom` on count as still streaming; an earlier one can still be
   * patched, at the cost of a copy of the content array. `argumentTexts`: what its open tool
   * calls streamed so far (a snapshot's or a merged frame's), for later `j` operations.
   */
  load(message: AssistantMessage, openFrom = 0, argumentTexts: readonly ArgumentText[] = []): void {
    this.argumentParsers.clear();
    this.knownArguments.clear();
    for (const { i, text } of argumentTexts) this.appendArguments(i, text);
    this.content = new SharedContent<Block>();
    message.content.forEach((block, index) => {
      const at = this.content.push(block);
      if (index < openFrom) this.content.close(at);
    });
    this.fields = { ...message, content: [] };
    this.message = undefined;
  }

  clear(): void {
    this.fields = undefined;
    this.message = undefined;
    // The blocks too: a server's encoder held a finished reply (its megabyte of arguments) until the next one began.
    this.content = new SharedContent<Block>();
    this.argumentParsers.clear();
    this.knownArguments.clear();
  }

  /** Adds a `toolcall_delta`'s fragment to the argument text of block `index`. */
  appendArguments(index: number, delta: string): void {
    let parser = this.argumentParsers.get(index);
    if (parser === undefined) this.argumentParsers.set(index, (parser = new PartialJsonParser()));
    parser.append(delta);
  }

  /** The argument text of each tool call still streaming, for a receiver that starts from this message. */
  argumentTexts(): ArgumentText[] {
    return [...this.argumentParsers].map(([i, parser]) => ({ i, text: parser.text }));
  }

  /**
   * What a `j` operation on block `index` sets now: its argument text parsed (a fresh `{}` before
   * any). The same object until the text grows, so a check and the `j` it allows share one parse.
   */
  argumentsOf(index: number): Record<string, unknown> {
    const parser = this.argumentParsers.get(index);
    const length = parser?.text.length ?? 0;
    const known = this.knownArguments.get(index);
    if (known !== undefined && known.length === length) return known.value;
    const value = objectOrEmpty(parser?.value());
    if (parser !== undefined) this.knownArguments.set(index, { length, value });
    return value;
  }

  /**
   * Takes `value` as what block `index`'s argument text parses to now, so `argumentsOf` and a `j`
   * give it without parsing. The caller vouches for it (`parsedTextLength` of the same text):
   * why, the sender's own parse of a megabyte of arguments, and its comparison with the
   * provider's, were most of the server's garbage.
   */
  knowArguments(index: number, value: Record<string, unknown>): void {
    const parser = this.argumentParsers.get(index);
    if (parser !== undefined) this.knownArguments.set(index, { length: parser.text.length, value });
  }

  /** The length of block `index`'s argument text (0 before any). */
  argumentLength(index: number): number {
    return this.argumentParsers.get(index)?.text.length ?? 0;
  }

  private forgetArguments(index: number): void {
    this.argumentParsers.delete(index);
    this.knownArguments.delete(index);
  }

  /** Applies `operations`; then the block at `ended` (its `*_end` event) no longer streams. `current` is then the new message. */
  apply(operations: readonly MessagePatchOperation[], ended?: number): void {
    if (this.fields === undefined) throw new Error("PatchedMessage.apply: no message was loaded.");
    let fields: Fields | undefined;
    // The blocks this patch copied already. An array: a patch has one or two operations, and a
    // Set per frame was 8.6 MB of the 333.6 MB the server allocated streaming 10,000 small calls.
    const copied: number[] = [];
    for (const operation of operations) {
      if ("n" in operation) {
        this.content.truncate(operation.n);
        for (const index of this.argumentParsers.keys()) if (index >= operation.n) this.forgetArguments(index);
        continue;
      }
      if ("b" in operation) {
        this.content.set(operation.i, operation.b);
        copied.push(operation.i);
        continue;
      }
      let target: Fields;
      if (operation.i === undefined) target = fields ??= { ...this.fields } as unknown as Fields;
      else {
        if (!copied.includes(operation.i)) {
          this.content.set(operation.i, { ...this.content.at(operation.i) } as Block);
          copied.push(operation.i);
        }
        target = this.content.at(operation.i) as unknown as Fields;
      }
      if ("a" in operation) target[operation.k] = `${(target[operation.k] as string | undefined) ?? ""}${operation.a}`;
      else if ("v" in operation) target[operation.k] = operation.v;
      else if ("j" in operation) target[operation.k] = this.argumentsOf(operation.i);
      else delete target[operation.k];
    }
    if (fields) this.fields = fields as unknown as AssistantMessage;
    if (ended !== undefined) {
      this.content.close(ended);
      this.forgetArguments(ended);
    }
    this.message = undefined;
  }
}
