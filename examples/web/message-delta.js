// Rebuilds message_update events from protocol 2's delta frames (src/protocol/message-delta.ts,
// whose tested TypeScript twin connectAgent uses): an update frame carries the model event
// without its partial message and, when the event does not say it all, a patch.

/** Returns a new message with the patch's operations applied. */
export function applyMessagePatch(message, operations) {
  const next = { ...message };
  let content;
  const copied = new Set();
  for (const operation of operations) {
    if ("n" in operation) {
      content ??= [...next.content];
      content.length = operation.n;
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

/** Holds the streaming message and turns update frames back into message_update events. */
export class MessageDeltaDecoder {
  reset(message) {
    this.message = message;
  }

  observe(event) {
    if (event.type === "message_start" && event.message.role === "assistant") this.message = event.message;
    else if (event.type === "message_end") this.message = undefined;
    else if (event.type === "message_update") this.message = event.message;
  }

  decode(frame) {
    const base = frame.message ?? this.message;
    if (base === undefined) throw new Error(`Update frame ${frame.seq} arrived outside a streaming message.`);
    const message = frame.message ?? applyMessagePatch(base, frame.patch ?? impliedPatch(frame.event));
    this.message = message;
    const event = { ...frame.event, partial: message };
    const block = typeof event.contentIndex === "number" ? message.content[event.contentIndex] : undefined;
    if (event.type === "text_end" && event.content === undefined && block?.type === "text") event.content = block.text;
    if (event.type === "thinking_end" && event.content === undefined && block?.type === "thinking") event.content = block.thinking;
    if (event.type === "toolcall_end" && event.toolCall === undefined) event.toolCall = block;
    return { type: "message_update", message, assistantMessageEvent: event };
  }
}
