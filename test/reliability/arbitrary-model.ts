/**
 * A model that sends anything at all (property-based, fast-check): events of any type or none,
 * partials and final messages whose fields are missing or of the wrong kind, content blocks that
 * are not blocks, tool calls with arguments of any shape, indexes out of range; then completes,
 * errors or throws before it streams. Its tool is named "work" and takes `{ n: number }`.
 */
import fc from "fast-check";
import { Observable } from "rxjs";
import type { AssistantMessage, Model, ModelEvent } from "../../src/types.js";
import { emptyUsage } from "../../src/types/messages.js";

/** Values a careless or hostile provider puts where an object, a string or an index belongs. */
const wrongValue = fc.oneof(
  fc.constantFrom(undefined, null, NaN, -1, 1e9, "0", "", true),
  fc.integer(),
  fc.string({ maxLength: 5 }),
  fc.constant([]),
  fc.constant({}),
);

const block = fc.oneof(
  wrongValue,
  fc.record(
    {
      type: fc.oneof(fc.constantFrom("text", "thinking", "toolCall", "image", "bogus"), wrongValue),
      text: fc.oneof(fc.string({ maxLength: 4 }), wrongValue),
      thinking: fc.oneof(fc.string({ maxLength: 4 }), wrongValue),
      id: fc.oneof(fc.constantFrom("a", "b", ""), wrongValue),
      name: fc.oneof(fc.constantFrom("work", "unknown"), wrongValue),
      arguments: fc.oneof(fc.constant({ n: 1 }), fc.constant({ n: "not a number" }), wrongValue, fc.anything({ maxDepth: 3 })),
    },
    { requiredKeys: [] },
  ),
);

const message = fc.oneof(
  wrongValue,
  fc.record(
    {
      role: fc.oneof(fc.constant("assistant"), wrongValue),
      content: fc.oneof(fc.array(block, { maxLength: 4 }), wrongValue),
      usage: fc.oneof(fc.constant(emptyUsage()), wrongValue),
      stopReason: fc.oneof(fc.constantFrom("stop", "toolUse", "error", "aborted", "length"), wrongValue),
      errorMessage: fc.oneof(fc.string({ maxLength: 4 }), wrongValue),
      timestamp: fc.oneof(fc.integer(), wrongValue),
      api: fc.constant("arbitrary"),
      provider: fc.constant("arbitrary"),
      model: fc.constant("arbitrary"),
    },
    { requiredKeys: [] },
  ),
);

const eventTypes = ["start", "text_start", "text_delta", "text_end", "thinking_start", "thinking_delta", "thinking_end", "toolcall_start", "toolcall_delta", "toolcall_end", "done", "error"];

const event = fc.oneof(
  wrongValue,
  fc.record(
    {
      type: fc.oneof(fc.constantFrom(...eventTypes), wrongValue),
      partial: message,
      message,
      error: message,
      contentIndex: fc.oneof(fc.integer({ min: -1, max: 5 }), wrongValue),
      delta: fc.oneof(fc.string({ maxLength: 4 }), wrongValue),
      content: fc.oneof(fc.string({ maxLength: 4 }), wrongValue),
      toolCall: block,
      reason: fc.oneof(fc.constantFrom("stop", "toolUse", "error", "aborted"), wrongValue),
      // What a provider reports of a failed call (ModelErrorEvent.failure), of any shape.
      failure: fc.oneof(
        wrongValue,
        fc.record(
          {
            status: fc.oneof(fc.constantFrom(429, 500, "503"), wrongValue, fc.constant({ toString: 1 })),
            transient: fc.oneof(fc.boolean(), wrongValue),
            retryAfterMs: fc.oneof(fc.constantFrom(0, 5, -1, Number.NaN, 1e12), wrongValue),
          },
          { requiredKeys: [] },
        ),
      ),
    },
    { requiredKeys: [] },
  ),
);

/** One model call: the events it sends, then how its stream ends. */
export const reply = fc.record({ events: fc.array(event, { maxLength: 8 }), end: fc.constantFrom("complete", "error", "throw before streaming") });

/**
 * Replays `replies`, one per call; a call past them answers with a plain final message, so every
 * run can end. Synchronously, or `delayMs` after the call on a real timer (for a model behind a server).
 */
export function arbitraryModel(replies: Array<{ events: unknown[]; end: string }>, delayMs?: number): Model {
  let call = 0;
  return {
    id: "arbitrary",
    provider: "arbitrary",
    api: "arbitrary",
    stream: () => {
      const planned = replies[call++];
      if (planned?.end === "throw before streaming") throw new Error("the provider failed before streaming");
      return new Observable<ModelEvent>((subscriber) => {
        const send = () => {
          if (planned === undefined) {
            const final: AssistantMessage = { role: "assistant", content: [], api: "arbitrary", provider: "arbitrary", model: "arbitrary", usage: emptyUsage(), stopReason: "stop", timestamp: 0 };
            subscriber.next({ type: "done", reason: "stop", message: final });
            subscriber.complete();
            return;
          }
          for (const sent of planned.events) subscriber.next(sent as ModelEvent);
          if (planned.end === "error") subscriber.error(new Error("the stream broke"));
          else subscriber.complete();
        };
        if (delayMs === undefined) return send();
        const timer = setTimeout(send, delayMs);
        return () => clearTimeout(timer);
      });
    },
  };
}
