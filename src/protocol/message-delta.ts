import type { AgentEvent, AgentMessage, AssistantMessage, ModelEvent } from "../types.js";
import { parsedTextLength } from "../model/partial-json-parser.js";
import { sameJson, sameSerialized } from "../util/same-json.js";
import { contentBlockAt, contentLength, withMessageFields } from "../util/shared-content.js";
import { type ArgumentText, type MessagePatchOperation, PatchedMessage } from "./patched-message.js";

export type { ArgumentText, MessagePatchOperation } from "./patched-message.js";

/**
 * Delta frames (protocol 2): a `message_update` travels as the model event without its
 * `partial`, plus a patch when the message changed in a way the event does not say. Each text,
 * thinking or tool-argument delta crosses the wire once, so a reply costs bytes in proportion
 * to its size, not to its size squared. The receiver applies the patch to the message it
 * already holds and rebuilds the full `message_update` event. In protocol 3 a tool call's
 * re-parsed arguments are not sent either: both ends parse the fragments the `toolcall_delta`s
 * carry (the `j` operation).
 */

type Block = AssistantMessage["content"][number];
type Fields = Record<string, unknown>;

/** A model event as the wire carries it: no `partial`; `content` and `toolCall` of `*_end` events left out when they equal the block. */
export interface WireModelEvent {
  type: ModelEvent["type"];
  [field: string]: unknown;
}

/** A `message_update` as a delta. */
export interface UpdateFrame {
  type: "update";
  seq: number;
  /** Present on a merged frame (a slow client): it stands for `first..seq`, and carries `message`. */
  first?: number;
  event: WireModelEvent;
  /** Absent when the event says it all (a `*_delta` appended to its block, or nothing changed). */
  patch?: MessagePatchOperation[];
  /** The whole message as of `seq`: set on merged frames instead of a patch. */
  message?: AssistantMessage;
  /** With `message` (protocol 3): the argument text of its tool calls still streaming, for later `j` operations. */
  argumentTexts?: ArgumentText[];
}

/**
 * Protocol 3: the `message_end` of the message that streamed, as a patch to the message the
 * receiver holds (the operations of `UpdateFrame.patch`; absent when nothing changed) instead
 * of the whole message again.
 */
export interface EndFrame {
  type: "end";
  seq: number;
  patch?: MessagePatchOperation[];
}

/** How the encoder writes frames. */
export interface MessageDeltaEncoderOptions {
  /**
   * Protocol 3: a tool call's arguments that equal what its streamed text parses to are sent as
   * a `j` operation (the receiver parses the fragments it already got) instead of in full.
   * Default false (protocol 2, which older receivers read).
   */
  argumentsFromText?: boolean;
}

/** Whether a model event ends its block (`*_end`). */
export function isEnd(type: string): boolean {
  return type === "text_end" || type === "thinking_end" || type === "toolcall_end";
}

/** What a `*_delta` event implies for its block, so the common case needs no patch. */
export function impliedPatch(event: WireModelEvent): MessagePatchOperation[] {
  if (event.type === "text_delta") return [{ i: event.contentIndex as number, k: "text", a: event.delta as string }];
  if (event.type === "thinking_delta") return [{ i: event.contentIndex as number, k: "thinking", a: event.delta as string }];
  return [];
}

/**
 * Whether `patch` is what `event` implies (`impliedPatch`), so the frame can leave it out.
 * Why not by comparing their JSON: two serializations on every frame were one of the encoder's
 * two largest costs for 10,000 small calls (a CPU profile of the server, `npm run bench:stream-e2e`;
 * the other was serializing the message's `usage`).
 */
export function isImpliedPatch(patch: readonly MessagePatchOperation[], event: WireModelEvent): boolean {
  if (event.type !== "text_delta" && event.type !== "thinking_delta") return patch.length === 0;
  const operation = patch[0];
  return (
    patch.length === 1 &&
    operation !== undefined &&
    "a" in operation &&
    operation.i === event.contentIndex &&
    operation.k === (event.type === "text_delta" ? "text" : "thinking") &&
    operation.a === event.delta
  );
}

/**
 * The sender's side: remembers the message as the receivers hold it (its own copy: a provider
 * may mutate its partial in place) and turns each update into an `UpdateFrame`.
 *
 * Why it compares only some blocks: the blocks still streaming (started, not ended), the one
 * the event names and any new ones. A block that ended does not change (the event grammar), and
 * comparing every block on every event made a reply of many blocks cost time in the square of
 * their count (10,000 small tool calls). Its copy shares unchanged blocks between updates
 * (SharedContent), for the same reason.
 */
export class MessageDeltaEncoder {
  /** The message as receivers hold it. */
  private readonly content = new PatchedMessage();
  /** What was last sent of the message's own fields, and of each block's, by block index. */
  private messageSent = new SentFields();
  private readonly blocksSent = new Map<number, SentFields>();
  /** The `*_delta` being encoded: the field it names grew by exactly `delta`. */
  private growing: { index: number; key: string; delta: string } | undefined;
  private readonly argumentsFromText: boolean;

  constructor(options: MessageDeltaEncoderOptions = {}) {
    this.argumentsFromText = options.argumentsFromText ?? false;
  }

  /** The message as receivers hold it after the last update, or undefined outside a message. */
  get current(): AssistantMessage | undefined {
    return this.content.current;
  }

  /** Whether a message streams (`current` is defined), without making `current`. */
  get streaming(): boolean {
    return this.content.ownFields !== undefined;
  }

  /** The argument text of each tool call of `current` still streaming (protocol 3; empty otherwise), for snapshots and merged frames. */
  argumentTexts(): ArgumentText[] {
    return this.content.argumentTexts();
  }

  /** Forgets the streaming message (it ended, or the session was reset). */
  clear(): void {
    this.content.clear();
    // What was sent of each block too: 10,000 small calls kept 10,000 of them after their reply.
    this.messageSent = new SentFields();
    this.blocksSent.clear();
  }

  /** Follows the session's events; returns the frame body of a `message_update`, else undefined. */
  encode(event: AgentEvent): Omit<UpdateFrame, "seq"> | undefined {
    if (event.type === "message_start" && event.message.role === "assistant") {
      this.start(event.message);
      return undefined;
    }
    if (event.type === "message_end") {
      this.clear();
      return undefined;
    }
    if (event.type !== "message_update") return undefined;
    if (this.content.ownFields === undefined) this.start(withMessageFields(event.message, { content: [] }));
    const modelEvent = event.assistantMessageEvent;
    this.growing =
      modelEvent.type === "text_delta" || modelEvent.type === "thinking_delta"
        ? { index: modelEvent.contentIndex, key: modelEvent.type === "text_delta" ? "text" : "thinking", delta: modelEvent.delta }
        : undefined;
    const named = "contentIndex" in modelEvent && typeof modelEvent.contentIndex === "number" ? modelEvent.contentIndex : undefined;
    if (this.argumentsFromText && modelEvent.type === "toolcall_delta") this.content.appendArguments(modelEvent.contentIndex, modelEvent.delta);
    const patch = this.diff(event.message, named);
    this.content.apply(patch, isEnd(modelEvent.type) ? named : undefined);
    // An ended block does not change (the event grammar); if a provider changes it anyway, it is compared afresh.
    if (isEnd(modelEvent.type) && named !== undefined) this.blocksSent.delete(named);
    const wireEvent = this.wireEvent(modelEvent);
    const frame: Omit<UpdateFrame, "seq"> = { type: "update", event: wireEvent };
    if (!isImpliedPatch(patch, wireEvent)) frame.patch = patch;
    return frame;
  }

  /**
   * Protocol 3: the operations that turn the message receivers hold into `message` (the
   * streamed message's `message_end`), and the encoder forgets the message as `encode` does at
   * its end; `undefined` when the event must go whole (protocol 2, or no message streams).
   *
   * Why: the whole message again was the largest frame of a reply (1 MB of arguments: a 1 MB
   * `message_end`, kept in the resume log and queued in each socket), though receivers hold it
   * already. Every block is compared, ended ones too (a provider's final message may differ),
   * without serializing (`sameJson`); a block that differs is sent whole.
   */
  endPatch(message: AgentMessage): MessagePatchOperation[] | undefined {
    const held = this.content.current;
    if (!this.argumentsFromText || held === undefined || message.role !== "assistant") return undefined;
    const operations: MessagePatchOperation[] = [];
    this.growing = undefined;
    this.diffFields(undefined, held as unknown as Fields, message as unknown as Fields, this.messageSent, operations);
    const length = contentLength(message);
    for (let index = 0; index < length; index++) {
      const block = contentBlockAt(message, index);
      if (block === undefined || sameJson(this.content.at(index), block)) continue;
      operations.push({ i: index, b: JSON.parse(JSON.stringify(block)) as Block });
    }
    if (length < this.content.length) operations.push({ n: length });
    this.clear();
    return operations;
  }

  private start(message: AssistantMessage): void {
    // Its own copy (a provider may change its partial in place); blocks the message starts with
    // count as streaming: nothing said they ended.
    this.content.load(JSON.parse(JSON.stringify(message)) as AssistantMessage, 0);
    this.messageSent = new SentFields();
    this.blocksSent.clear();
  }

  private diff(next: AssistantMessage, named: number | undefined): MessagePatchOperation[] {
    const operations: MessagePatchOperation[] = [];
    // `content` of the message held is not read here (a long one is built when read).
    this.diffFields(undefined, this.content.ownFields as unknown as Fields, next as unknown as Fields, this.messageSent, operations);
    const length = contentLength(next);
    for (const index of this.comparedIndices(named, length)) {
      const block = contentBlockAt(next, index);
      // A provider's partial may hold blocks that are not objects: the loop checks a partial's
      // content only for being an array (a scan per delta would cost a long reply its length
      // each time), so such a block is not sent, and one held so is replaced whole.
      if (typeof block !== "object" || block === null) continue;
      const previous: unknown = this.content.at(index);
      if (typeof previous !== "object" || previous === null || (previous as Block).type !== block.type) {
        this.blocksSent.set(index, new SentFields());
        operations.push({ i: index, b: JSON.parse(JSON.stringify(block)) as Block });
        continue;
      }
      let sent = this.blocksSent.get(index);
      if (sent === undefined) this.blocksSent.set(index, (sent = new SentFields()));
      this.diffFields(index, previous as unknown as Fields, block as unknown as Fields, sent, operations);
    }
    if (length < this.content.length) operations.push({ n: length });
    return operations;
  }

  /** The blocks `diff` compares, ascending: those still streaming, the one the event names, any new ones. */
  private comparedIndices(named: number | undefined, length: number): number[] {
    const indices = this.content.openIndices();
    const held = this.content.length;
    if (named !== undefined && named < held && !indices.includes(named)) {
      indices.push(named);
      indices.sort((left, right) => left - right);
    }
    // New blocks come after every held one.
    for (let index = held; index < length; index++) indices.push(index);
    return indices;
  }

  private diffFields(index: number | undefined, before: Fields, after: Fields, sent: SentFields, operations: MessagePatchOperation[]): void {
    // `for…in`, not `Object.keys`: an array of keys per object and event was the largest share of
    // what the server allocated for 10,000 small calls (`BENCH_ALLOCATION_PROFILE`,
    // bench/stream-end-to-end.ts). The messages are plain data: their prototype adds no key.
    for (const key in after) {
      if (key === "content" && index === undefined) continue;
      const value = after[key];
      if (value === undefined) continue;
      const previous = before[key];
      if (typeof value === "string") {
        const seen = sent.strings.get(key);
        sent.strings.set(key, value);
        // Comparing strings on every delta costs the message's length each time (even `endsWith`
        // flattens a provider's concatenated string: 10 000 deltas took 4.4 s, 0.6 s without):
        // the provider's own string object unchanged since the last update is unchanged, and the
        // field a `*_delta` names grew by the delta when its length grew by the delta's.
        if (value === seen && seen !== undefined) continue;
        if (typeof previous === "string") {
          const growing = this.growing !== undefined && this.growing.index === index && this.growing.key === key ? this.growing.delta : undefined;
          if (growing !== undefined && value.length === previous.length + growing.length) {
            operations.push(appendOperation(index, key, growing));
            continue;
          }
          if (value === previous) continue;
          if (value.startsWith(previous)) {
            operations.push(appendOperation(index, key, value.slice(previous.length)));
            continue;
          }
        }
        operations.push(setOperation(index, key, value));
        continue;
      }
      // A number, a boolean or null held as it is (the message held is what receivers have).
      if (value === previous) continue;
      // Re-serializing long streamed arguments on every delta would cost their size each time;
      // providers (ours and pi-ai's) assign a new object whenever they re-parse them.
      if (key === "arguments" && index !== undefined && sent.arguments === value) continue;
      // The message's `usage` on every event: compared without serializing. Not the arguments:
      // those changed when they are a new object, and a walk would come before the serializing.
      if (key !== "arguments" && sameJson(value, previous)) continue;
      if (key === "arguments" && index !== undefined && this.argumentsFromText && this.derivedArguments(index, value, sent, operations)) continue;
      if (key === "arguments") sent.derivedLength = undefined;
      const json = JSON.stringify(value);
      const sentJson = sent.json.get(key) ?? (previous === undefined ? undefined : JSON.stringify(previous));
      if (key === "arguments" && index !== undefined) sent.arguments = value;
      sent.json.set(key, json);
      if (json !== sentJson) operations.push(setOperation(index, key, JSON.parse(json) as unknown));
    }
    for (const key in before) {
      if (key === "content" && index === undefined) continue;
      if (before[key] !== undefined && after[key] === undefined) operations.push(index === undefined ? { k: key, d: 1 } : { i: index, k: key, d: 1 });
    }
  }

  /**
   * Protocol 3: when `value` is what the call's streamed text parses to (ours do; a provider with
   * another parser may not), the receiver derives it (`j`) and this returns true. Compared without
   * serializing (sameJson): serializing a megabyte of arguments on both sides made most of the
   * server's garbage. The receiver's `j` yields the same value as `argumentsOf` here.
   */
  private derivedArguments(index: number, value: unknown, sent: SentFields, operations: MessagePatchOperation[]): boolean {
    const length = this.content.argumentLength(index);
    if (length === 0) return false;
    // The draft's parser vouches that it parsed text of this length, the call's text the events
    // carried (a `toolcall_delta`'s delta is what its call's arguments grew by): no parse here,
    // and the message held shares the provider's value. Measured on 1 MB in 1 KB deltas (`npm run
    // bench:stream-e2e`): the server allocated 27.3 -> 18.5 MB up to `message_end`, peak heap
    // 9.7-10.1 -> 5.0-5.4 MB.
    if (parsedTextLength(value) === length) this.content.knowArguments(index, value as Record<string, unknown>);
    else if (!sameJson(value, this.content.argumentsOf(index))) return false;
    sent.arguments = value;
    // What the receiver holds is now the derived value: a later full send compares against it.
    sent.json.delete("arguments");
    // The same text parses to the same value: the receiver holds it already.
    if (sent.derivedLength !== length) operations.push({ i: index, k: "arguments", j: 1 });
    sent.derivedLength = length;
    return true;
  }

  /** The event without `partial`, and without an `*_end`'s copy of its block when the receiver has it. */
  private wireEvent(event: ModelEvent): WireModelEvent {
    const { partial: _partial, ...rest } = event as ModelEvent & { partial?: unknown };
    const wire = rest as WireModelEvent & Fields;
    const block = "contentIndex" in event ? this.content.at(event.contentIndex) : undefined;
    if (event.type === "text_end" && block?.type === "text" && block.text === event.content) delete wire.content;
    if (event.type === "thinking_end" && block?.type === "thinking" && block.thinking === event.content) delete wire.content;
    if (event.type === "toolcall_end" && block !== undefined && sameSerialized(block, event.toolCall)) delete wire.toolCall;
    return wire;
  }
}

// Each operation's `i` (the block; none for the message's own fields) comes first, as receivers
// and logs have always had it: written out, not spread from an `{ i }` made per call.
function appendOperation(index: number | undefined, key: string, text: string): MessagePatchOperation {
  return index === undefined ? { k: key, a: text } : { i: index, k: key, a: text };
}

function setOperation(index: number | undefined, key: string, value: unknown): MessagePatchOperation {
  return index === undefined ? { k: key, v: value } : { i: index, k: key, v: value };
}

/** What was last sent of one object's fields (the message's own, or one block's). */
class SentFields {
  /** JSON of the non-string fields as last sent. */
  readonly json = new Map<string, string>();
  /** The string each field had at the last update, as the provider's own object. */
  readonly strings = new Map<string, string>();
  /** The `arguments` object last seen: providers replace it when they re-parse. */
  arguments: unknown;
  /** The length of the argument text the last `j` was sent at; unset after a full send. */
  derivedLength: number | undefined;
}
