// Rebuilds message_update events from the delta frames of protocols 2 and 3
// (src/protocol/message-delta-decoder.ts, whose tested TypeScript twin connectAgent uses;
// test/server/web-page-decoder.test.ts checks the two decode alike): an update frame carries the
// model event without its partial message and, when the event does not say it all, a patch.
// Protocol 3 adds the `j` operation (a tool call's arguments parsed from the text its
// `toolcall_delta`s carried) and `end` frames (a message_end as a patch to the message held).

import { parseToolArguments } from "./partial-json.js";

/**
 * Returns a new message with the patch's operations applied. `argumentTexts` (block index to the
 * text its tool call streamed) is what a `j` operation parses; a cut forgets the blocks it drops.
 */
export function applyMessagePatch(message, operations, argumentTexts = new Map()) {
  const next = { ...message };
  let content;
  const copied = new Set();
  for (const operation of operations) {
    if ("n" in operation) {
      content ??= [...next.content];
      content.length = operation.n;
      for (const index of [...argumentTexts.keys()]) if (index >= operation.n) argumentTexts.delete(index);
      continue;
    }
    if ("b" in operation) {
      content ??= [...next.content];
      content[operation.i] = operation.b;
      copied.add(operation.i);
      continue;
    }
    let target = next;
    if (operation.i !== undefined) {
      content ??= [...next.content];
      if (!copied.has(operation.i)) {
        content[operation.i] = { ...content[operation.i] };
        copied.add(operation.i);
      }
      target = content[operation.i];
    }
    if ("a" in operation) target[operation.k] = `${target[operation.k] ?? ""}${operation.a}`;
    else if ("v" in operation) target[operation.k] = operation.v;
    else if ("j" in operation) target[operation.k] = parseToolArguments(argumentTexts.get(operation.i) ?? "");
    else delete target[operation.k];
  }
  if (content) next.content = content;
  return next;
}

function impliedPatch(event) {
  if (event.type === "text_delta") return [{ i: event.contentIndex, k: "text", a: event.delta }];
  if (event.type === "thinking_delta") return [{ i: event.contentIndex, k: "thinking", a: event.delta }];
  return [];
}

function isEnd(type) {
  return type === "text_end" || type === "thinking_end" || type === "toolcall_end";
}

/** Holds the streaming message and turns update and end frames back into message_update and message_end events. */
export class MessageDeltaDecoder {
  /** The argument text each tool call still streaming carried so far, by block index (protocol 3). */
  argumentTexts = new Map();

  /** Sets the streaming message: from a snapshot (with its `argumentTexts`), or undefined when none streams. */
  reset(message, argumentTexts) {
    this.message = message;
    this.loadArgumentTexts(argumentTexts);
  }

  observe(event) {
    if (event.type === "message_start" && event.message.role === "assistant") this.reset(event.message);
    else if (event.type === "message_end") this.reset(undefined);
    else if (event.type === "message_update") this.reset(event.message);
  }

  decode(frame) {
    const base = frame.message ?? this.message;
    if (base === undefined) throw new Error(`Update frame ${frame.seq} arrived outside a streaming message.`);
    const named = typeof frame.event.contentIndex === "number" ? frame.event.contentIndex : undefined;
    let message;
    if (frame.message !== undefined) {
      message = frame.message;
      this.loadArgumentTexts(frame.argumentTexts);
    } else {
      // Kept whatever the protocol: a `j` operation later in this frame parses it.
      if (frame.event.type === "toolcall_delta" && named !== undefined && typeof frame.event.delta === "string") {
        this.argumentTexts.set(named, `${this.argumentTexts.get(named) ?? ""}${frame.event.delta}`);
      }
      message = applyMessagePatch(base, frame.patch ?? impliedPatch(frame.event), this.argumentTexts);
      if (named !== undefined && isEnd(frame.event.type)) this.argumentTexts.delete(named);
    }
    this.message = message;
    const event = { ...frame.event, partial: message };
    const block = typeof event.contentIndex === "number" ? message.content[event.contentIndex] : undefined;
    if (event.type === "text_end" && event.content === undefined && block?.type === "text") event.content = block.text;
    if (event.type === "thinking_end" && event.content === undefined && block?.type === "thinking") event.content = block.thinking;
    if (event.type === "toolcall_end" && event.toolCall === undefined) event.toolCall = block;
    return { type: "message_update", message, assistantMessageEvent: event };
  }

  /** The message_end an `end` frame stands for (protocol 3): the message held, with the frame's patch applied. */
  end(frame) {
    if (this.message === undefined) throw new Error(`End frame ${frame.seq} arrived outside a streaming message.`);
    const message = applyMessagePatch(this.message, frame.patch ?? [], this.argumentTexts);
    this.reset(undefined);
    return { type: "message_end", message };
  }

  loadArgumentTexts(argumentTexts) {
    this.argumentTexts = new Map((argumentTexts ?? []).map(({ i, text }) => [i, text]));
  }
}
