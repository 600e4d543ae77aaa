import { describe, expect, it } from "vitest";
import { MessageDeltaDecoder, MessageDeltaEncoder, type UpdateFrame } from "../../src/protocol/message-delta.js";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AgentEvent, AssistantMessage, ModelEvent } from "../../src/types.js";
import { contentLength, isPendingSnapshot } from "../../src/util/shared-content.js";

const base: AssistantMessage = { role: "assistant", content: [], api: "a", provider: "p", model: "m", usage: emptyUsage(), stopReason: "stop", timestamp: 1 };

/** Encodes `events` as the server does, sends each frame through JSON, and decodes it as a client does. */
function roundTrip(events: AgentEvent[]): { frames: UpdateFrame[]; decoded: AgentEvent[] } {
  const encoder = new MessageDeltaEncoder();
  const decoder = new MessageDeltaDecoder();
  const frames: UpdateFrame[] = [];
  const decoded: AgentEvent[] = [];
  events.forEach((event, index) => {
    const update = encoder.encode(event);
    if (update === undefined) {
      const copy = JSON.parse(JSON.stringify(event)) as AgentEvent;
      decoder.observe(copy);
      decoded.push(copy);
      return;
    }
    const frame = JSON.parse(JSON.stringify({ ...update, seq: index + 1 })) as UpdateFrame;
    frames.push(frame);
    decoded.push(decoder.decode(frame));
  });
  return { frames, decoded };
}

const update = (message: AssistantMessage, event: ModelEvent): AgentEvent => ({ type: "message_update", message, assistantMessageEvent: event });

describe("message delta frames", () => {
  it("send a text delta as the event alone, and rebuild message and partial", () => {
    const started = { ...base, content: [{ type: "text" as const, text: "" }] };
    const one = { ...base, content: [{ type: "text" as const, text: "Hel" }] };
    const two = { ...base, content: [{ type: "text" as const, text: "Hello" }] };
    const events: AgentEvent[] = [
      { type: "message_start", message: base },
      update(started, { type: "text_start", contentIndex: 0, partial: started }),
      update(one, { type: "text_delta", contentIndex: 0, delta: "Hel", partial: one }),
      update(two, { type: "text_delta", contentIndex: 0, delta: "lo", partial: two }),
      update(two, { type: "text_end", contentIndex: 0, content: "Hello", partial: two }),
      { type: "message_end", message: two },
    ];
    const { frames, decoded } = roundTrip(events);
    expect(frames).toEqual([
      { type: "update", seq: 2, event: { type: "text_start", contentIndex: 0 }, patch: [{ i: 0, b: { type: "text", text: "" } }] },
      { type: "update", seq: 3, event: { type: "text_delta", contentIndex: 0, delta: "Hel" } },
      { type: "update", seq: 4, event: { type: "text_delta", contentIndex: 0, delta: "lo" } },
      { type: "update", seq: 5, event: { type: "text_end", contentIndex: 0 } },
    ]);
    expect(decoded).toEqual(events);
  });

  it("patches what the event does not say: re-parsed tool arguments, usage, a new field, a removed one", () => {
    const call = { type: "toolCall" as const, id: "c1", name: "f", arguments: {} };
    const started = { ...base, content: [call] };
    const parsed = { ...base, content: [{ ...call, arguments: { city: "Par" } }], usage: { ...emptyUsage(), output: 3 }, responseId: "r1" };
    const ended = { ...base, content: [{ ...call, arguments: { city: "Paris" } }] };
    const events: AgentEvent[] = [
      { type: "message_start", message: base },
      update(started, { type: "toolcall_start", contentIndex: 0, partial: started }),
      update(parsed as AssistantMessage, { type: "toolcall_delta", contentIndex: 0, delta: '{"city":"Par', partial: parsed as AssistantMessage }),
      update(ended, { type: "toolcall_end", contentIndex: 0, toolCall: ended.content[0] as never, partial: ended }),
    ];
    const { frames, decoded } = roundTrip(events);
    expect(frames[1]?.patch).toEqual([
      { k: "usage", v: { ...emptyUsage(), output: 3 } },
      { k: "responseId", v: "r1" },
      { i: 0, k: "arguments", v: { city: "Par" } },
    ]);
    expect(frames[2]).toEqual({
      type: "update",
      seq: 4,
      event: { type: "toolcall_end", contentIndex: 0 },
      patch: [{ k: "usage", v: emptyUsage() }, { k: "responseId", d: 1 }, { i: 0, k: "arguments", v: { city: "Paris" } }],
    });
    expect(decoded).toEqual(events);
  });

  it("keeps its own copy when a provider mutates one partial in place (as pi-ai's do)", () => {
    const partial: AssistantMessage = { ...base, content: [] };
    const encoder = new MessageDeltaEncoder();
    const decoder = new MessageDeltaDecoder();
    const snapshots: unknown[] = [];
    const decoded: AgentEvent[] = [];
    const send = (event: AgentEvent) => {
      snapshots.push(JSON.parse(JSON.stringify(event)));
      const frame = encoder.encode(event);
      if (frame) decoded.push(decoder.decode(JSON.parse(JSON.stringify({ ...frame, seq: 1 })) as UpdateFrame));
      else decoder.observe(JSON.parse(JSON.stringify(event)) as AgentEvent);
    };
    send({ type: "message_start", message: partial });
    partial.content.push({ type: "text", text: "" });
    send(update(partial, { type: "text_start", contentIndex: 0, partial }));
    for (const delta of ["a", "bc", "def"]) {
      (partial.content[0] as { text: string }).text += delta;
      partial.usage.output += 1;
      send(update(partial, { type: "text_delta", contentIndex: 0, delta, partial }));
    }
    expect(decoded).toEqual(snapshots.slice(1));
  });

  it("rebuilds a merged frame from the whole message it carries", () => {
    const message = { ...base, content: [{ type: "text" as const, text: "all of it" }] };
    const decoder = new MessageDeltaDecoder();
    const event = decoder.decode({ type: "update", seq: 9, first: 3, event: { type: "text_delta", contentIndex: 0, delta: "it" }, message });
    expect(event).toEqual(update(message, { type: "text_delta", contentIndex: 0, delta: "it", partial: message }));
  });

  it("round-trips a reply of many tool calls, two streaming at a time", () => {
    const draft = new AssistantMessageDraft({ api: "a", provider: "p", model: "m", timestamp: 1 });
    const modelEvents: ModelEvent[] = [...draft.start()];
    let waiting: number | undefined;
    for (let call = 0; call < 150; call++) {
      const opened = draft.openToolCall(call % 9 === 0 ? "" : `c${call}`, "f");
      modelEvents.push(...opened.events);
      if (call % 9 === 0) draft.updateToolCall(opened.index, { id: `late${call}` });
      for (const fragment of ['{"n":', `${call}}`]) modelEvents.push(...draft.appendToolArguments(opened.index, fragment));
      if (waiting !== undefined) modelEvents.push(...draft.close(waiting));
      waiting = opened.index;
    }
    const done = draft.finish("toolUse").at(-1);
    if (done?.type !== "done") throw new Error("expected done");
    const events: AgentEvent[] = [
      ...modelEvents.map((event): AgentEvent => (event.type === "start" ? { type: "message_start", message: event.partial } : update((event as { partial: AssistantMessage }).partial, event))),
      { type: "message_end", message: done.message },
    ];
    const { frames, decoded } = roundTrip(events);
    expect(JSON.parse(JSON.stringify(decoded))).toStrictEqual(JSON.parse(JSON.stringify(events)));
    // The id that arrived late travels as a patch of the block still streaming.
    expect(frames.some((frame) => frame.patch?.some((operation) => "k" in operation && operation.k === "id" && operation.i === 9))).toBe(true);
  });

  it("decodes a reply of many tool calls without copying its content per frame", () => {
    const calls = 1_000;
    const draft = new AssistantMessageDraft({ api: "a", provider: "p", model: "m", timestamp: 1 });
    const modelEvents: ModelEvent[] = [...draft.start()];
    for (let call = 0; call < calls; call++) {
      const opened = draft.openToolCall(`c${call}`, "f");
      modelEvents.push(...opened.events);
      for (const fragment of ['{"n":', `${call}}`]) modelEvents.push(...draft.appendToolArguments(opened.index, fragment));
      modelEvents.push(...draft.close(opened.index));
    }
    const done = draft.finish("toolUse").at(-1);
    if (done?.type !== "done") throw new Error("expected done");
    const events: AgentEvent[] = [
      ...modelEvents.map((event): AgentEvent => (event.type === "start" ? { type: "message_start", message: event.partial } : update((event as { partial: AssistantMessage }).partial, event))),
      { type: "message_end", message: done.message },
    ];
    const { decoded } = roundTrip(events);
    const updates = decoded.filter((event): event is Extract<AgentEvent, { type: "message_update" }> => event.type === "message_update");
    // Blocks copied into content arrays built while decoding (a long message's array is built when read).
    const copied = updates.reduce((total, event) => total + (isPendingSnapshot(event.message) ? 0 : contentLength(event.message)), 0);

    // Why: each of the 4,000 frames (4 per call) copied the whole content: 2,002,000 block copies for
    // 1,000 calls, n² (10,000 calls: 200 million). Now a message of fewer than 128 blocks is copied
    // (as SharedContent does), a longer one shared.
    expect(copied).toBe((4 * (127 * 128)) / 2);
    expect(updates.every((event) => (event.assistantMessageEvent as { partial: unknown }).partial === event.message)).toBe(true);
    // Events read after all were decoded (a shared content keeps what each frame saw); sampled,
    // as deep equality of 4,000 messages of up to 1,000 blocks takes a minute.
    const sampled = (list: AgentEvent[]) => JSON.parse(JSON.stringify(list.filter((_event, index) => index % 97 === 0 || index >= list.length - 3))) as unknown;
    expect(sampled(decoded)).toStrictEqual(sampled(events));
  });

  it("reads only the blocks an event can change: the streaming ones, the one it names and new ones", () => {
    const encoder = new MessageDeltaEncoder();
    const ended = Array.from({ length: 300 }, (_unused, index) => ({ type: "text" as const, text: `block ${index}` }));
    let reads = 0;
    const counted = (content: AssistantMessage["content"]): AssistantMessage["content"] =>
      new Proxy(content, {
        get(target, key, receiver) {
          if (typeof key === "string" && /^\d+$/.test(key)) reads++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
    encoder.encode({ type: "message_start", message: { ...base, content: [] } });
    for (let index = 0; index < 300; index++) {
      const message = { ...base, content: ended.slice(0, index + 1) };
      encoder.encode(update(message, { type: "text_start", contentIndex: index, partial: message }));
      encoder.encode(update(message, { type: "text_end", contentIndex: index, content: `block ${index}`, partial: message }));
    }
    const streaming = { ...base, content: counted([...ended, { type: "text", text: "more" }]) };
    reads = 0;
    encoder.encode(update(streaming, { type: "text_start", contentIndex: 300, partial: streaming }));
    const grown = { ...base, content: counted([...ended, { type: "text", text: "more!" }]) };
    const frame = encoder.encode(update(grown, { type: "text_delta", contentIndex: 300, delta: "!", partial: grown }));

    // Why: comparing all 300 ended blocks on every event made many blocks cost their count squared.
    expect(reads).toBeLessThanOrEqual(4);
    expect(frame).toStrictEqual({ type: "update", event: { type: "text_delta", contentIndex: 300, delta: "!" } });
    expect(encoder.current?.content).toHaveLength(301);
  });
});
