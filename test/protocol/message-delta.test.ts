import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MessageDeltaDecoder } from "../../src/protocol/message-delta-decoder.js";
import { type EndFrame, isImpliedPatch, MessageDeltaEncoder, type MessageDeltaEncoderOptions, type UpdateFrame } from "../../src/protocol/message-delta.js";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AgentEvent, AgentMessage, AssistantMessage, ModelEvent } from "../../src/types.js";
import { contentLength, isPendingSnapshot } from "../../src/util/shared-content.js";

const base: AssistantMessage = { role: "assistant", content: [], api: "a", provider: "p", model: "m", usage: emptyUsage(), stopReason: "stop", timestamp: 1 };

/** Encodes `events` as the server does, sends each frame through JSON, and decodes it as a client does. */
function roundTrip(events: AgentEvent[], options?: MessageDeltaEncoderOptions): { frames: UpdateFrame[]; ends: EndFrame[]; decoded: AgentEvent[] } {
  const encoder = new MessageDeltaEncoder(options);
  const decoder = new MessageDeltaDecoder();
  const frames: UpdateFrame[] = [];
  const ends: EndFrame[] = [];
  const decoded: AgentEvent[] = [];
  events.forEach((event, index) => {
    const end = endFrameOf(encoder, event, index + 1);
    if (end !== undefined) {
      ends.push(end);
      decoded.push(decoder.end(end));
      return;
    }
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
  return { frames, ends, decoded };
}

/** The `end` frame the server sends for `event` (protocol 3: a streamed message's `message_end`), through JSON; else undefined. */
function endFrameOf(encoder: MessageDeltaEncoder, event: AgentEvent, seq: number): EndFrame | undefined {
  const patch = event.type === "message_end" ? encoder.endPatch(event.message) : undefined;
  return patch === undefined ? undefined : (JSON.parse(JSON.stringify({ type: "end", seq, ...(patch.length > 0 ? { patch } : {}) })) as EndFrame);
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

  // The loop passes a provider's partial on with its content checked only for being an array; a
  // `null` where a block was threw in the encoder, and over Redis that ended the process.
  it("leave out a partial's blocks that are not objects, and go on with the next partial", () => {
    const one = { ...base, content: [{ type: "text" as const, text: "Hel" }] };
    const broken = { ...base, content: [null, 5] } as unknown as AssistantMessage;
    const two = { ...base, content: [{ type: "text" as const, text: "Hello" }] };
    const events: AgentEvent[] = [
      { type: "message_start", message: base },
      update(one, { type: "text_delta", contentIndex: 0, delta: "Hel", partial: one }),
      update(broken, { type: "thinking_start", contentIndex: 1, partial: broken }),
      update(two, { type: "text_delta", contentIndex: 0, delta: "lo", partial: two }),
    ];
    const { frames, decoded } = roundTrip(events);
    expect(frames[1]).toStrictEqual({ type: "update", seq: 3, event: { type: "thinking_start", contentIndex: 1 } });
    expect(decoded[3]).toEqual(events[3]);
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

  it("sends a field only when its JSON changed: not for an equal new usage object or the same number", () => {
    const text = (value: string, changes: Partial<AssistantMessage> = {}): AssistantMessage => ({ ...base, content: [{ type: "text", text: value }], ...changes });
    const started = text("");
    const same = text("a", { usage: { ...emptyUsage() }, timestamp: 1 });
    const later = text("ab", { usage: { ...emptyUsage(), input: 2 }, timestamp: 2 });
    const events: AgentEvent[] = [
      { type: "message_start", message: base },
      update(started, { type: "text_start", contentIndex: 0, partial: started }),
      update(same, { type: "text_delta", contentIndex: 0, delta: "a", partial: same }),
      update(later, { type: "text_delta", contentIndex: 0, delta: "b", partial: later }),
    ];
    const { frames, decoded } = roundTrip(events);
    expect(frames[1]).toEqual({ type: "update", seq: 3, event: { type: "text_delta", contentIndex: 0, delta: "a" } });
    expect(frames[2]?.patch).toEqual([
      { k: "usage", v: { ...emptyUsage(), input: 2 } },
      { k: "timestamp", v: 2 },
      { i: 0, k: "text", a: "b" },
    ]);
    expect(decoded).toEqual(events);
  });

  it("leaves out only the patch a delta event implies", () => {
    const event = { type: "text_delta" as const, contentIndex: 1, delta: "ab" };
    expect(isImpliedPatch([{ i: 1, k: "text", a: "ab" }], event)).toBe(true);
    expect(isImpliedPatch([{ i: 1, k: "thinking", a: "ab" }], event)).toBe(false);
    expect(isImpliedPatch([{ i: 0, k: "text", a: "ab" }], event)).toBe(false);
    expect(isImpliedPatch([{ k: "text", a: "ab" }], event)).toBe(false);
    expect(isImpliedPatch([{ i: 1, k: "text", a: "a" }], event)).toBe(false);
    expect(isImpliedPatch([{ i: 1, k: "text", v: "ab" }], event)).toBe(false);
    expect(isImpliedPatch([{ i: 1, k: "text", a: "ab" }, { k: "responseId", v: "r" }], event)).toBe(false);
    expect(isImpliedPatch([], event)).toBe(false);
    expect(isImpliedPatch([{ i: 0, k: "thinking", a: "x" }], { type: "thinking_delta", contentIndex: 0, delta: "x" })).toBe(true);
    expect(isImpliedPatch([], { type: "toolcall_delta", contentIndex: 0, delta: "{" })).toBe(true);
    expect(isImpliedPatch([{ i: 0, k: "arguments", j: 1 }], { type: "toolcall_delta", contentIndex: 0, delta: "{" })).toBe(false);
    expect(isImpliedPatch([], { type: "text_end", contentIndex: 0 })).toBe(true);
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

/** The agent events of one reply of tool calls, each streamed through the draft in the given fragments. */
function streamedCalls(calls: { text: string; cuts: number[] }[]): AgentEvent[] {
  const draft = new AssistantMessageDraft({ api: "a", provider: "p", model: "m", timestamp: 1 });
  const modelEvents: ModelEvent[] = [...draft.start()];
  calls.forEach(({ text, cuts }, call) => {
    const opened = draft.openToolCall(`c${call}`, "f");
    modelEvents.push(...opened.events);
    let from = 0;
    for (const cut of [...cuts, text.length].sort((left, right) => left - right)) {
      modelEvents.push(...draft.appendToolArguments(opened.index, text.slice(from, cut)));
      from = Math.max(from, cut);
    }
    modelEvents.push(...draft.close(opened.index));
  });
  const done = draft.finish("toolUse").at(-1);
  if (done?.type !== "done") throw new Error("expected done");
  return [
    ...modelEvents.map((event): AgentEvent => (event.type === "start" ? { type: "message_start", message: event.partial } : update((event as { partial: AssistantMessage }).partial, event))),
    { type: "message_end", message: done.message },
  ];
}

/** About `length` characters of arguments: a long string and small records, as bench/streamed-arguments.ts. */
function longArguments(records: number): string {
  return JSON.stringify({ path: "notes.txt", content: "lorem ipsum ".repeat(records * 4), records: Array.from({ length: records }, (_unused, id) => ({ id, name: `item ${id}`, tags: ["a"], done: id % 2 === 0 })) });
}

const frameBytes = (frames: UpdateFrame[]): number => frames.reduce((total, frame) => total + JSON.stringify(frame).length, 0);
const sendsArguments = (frames: UpdateFrame[]): boolean => frames.some((frame) => frame.patch?.some((operation) => "v" in operation && "k" in operation && operation.k === "arguments"));

describe("message delta frames, protocol 3 (arguments derived from their streamed text)", () => {
  it("send a long call's arguments once, as its deltas, and rebuild every event", () => {
    const text = longArguments(2_000);
    const cuts = Array.from({ length: Math.floor(text.length / 1024) }, (_unused, index) => (index + 1) * 1024);
    const events = streamedCalls([{ text, cuts }]);

    const derived = roundTrip(events, { argumentsFromText: true });
    const sentWhole = roundTrip(events);

    expect(derived.decoded).toEqual(events);
    expect(sentWhole.decoded).toEqual(events);
    // The message's end is an `end` frame that patches only its stop reason: the receiver holds the rest.
    expect(derived.ends).toStrictEqual([{ type: "end", seq: events.length, patch: [{ k: "stopReason", v: "toolUse" }] }]);
    expect(sentWhole.ends).toStrictEqual([]);
    // Why: protocol 2 re-sent the arguments each time the draft re-parsed them (every fragment up to
    // 4 KiB, then as they doubled) and once more whole at the end: about 3x the text on top of the deltas.
    expect(sendsArguments(derived.frames)).toBe(false);
    // The deltas as JSON strings (the records' quotes escaped) and each frame's envelope.
    expect(frameBytes(derived.frames)).toBeLessThan(text.length * 1.35);
    expect(frameBytes(sentWhole.frames)).toBeGreaterThan(text.length * 3);
    expect(derived.frames.filter((frame) => frame.patch?.some((operation) => "j" in operation)).length).toBeGreaterThan(4);
  });

  it("rebuild every event for any arguments cut anywhere, and from a snapshot or merged frame taken mid-call", () => {
    const argumentsText = fc.tuple(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }), fc.boolean()).map(([value, spaced]) => JSON.stringify(value, undefined, spaced ? 1 : undefined));
    const call = fc.tuple(argumentsText, fc.array(fc.nat(), { maxLength: 8 })).map(([text, seeds]) => ({ text, cuts: seeds.map((seed) => seed % (text.length + 1)) }));
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 3 }), fc.nat(), (calls, joinSeed) => {
        const events = streamedCalls(calls);
        const encoder = new MessageDeltaEncoder({ argumentsFromText: true });
        const decoder = new MessageDeltaDecoder();
        // A second receiver that starts at `join` from what the sender holds (a snapshot or a merged frame).
        const late = new MessageDeltaDecoder();
        const join = 1 + (joinSeed % (events.length - 1));
        const decoded: AgentEvent[] = [];
        const decodedLate: AgentEvent[] = [];
        events.forEach((event, index) => {
          if (index === join) late.reset(encoder.current, JSON.parse(JSON.stringify(encoder.argumentTexts())) as never);
          const end = endFrameOf(encoder, event, index + 1);
          const frame = end === undefined ? encoder.encode(event) : undefined;
          for (const [receiver, list] of [[decoder, decoded], [late, decodedLate]] as const) {
            if (receiver === late && index < join) continue;
            if (end !== undefined) list.push(receiver.end(end));
            else if (frame === undefined) {
              const copy = JSON.parse(JSON.stringify(event)) as AgentEvent;
              receiver.observe(copy);
              list.push(copy);
            } else list.push(receiver.decode(JSON.parse(JSON.stringify({ ...frame, seq: index + 1 })) as UpdateFrame));
          }
        });
        expect(decoded).toEqual(events);
        expect(decodedLate).toEqual(events.slice(join));
      }),
      { numRuns: 300 },
    );
  });

  it("hold the draft's own arguments as they are, without parsing the text again, and derive them on the other end", () => {
    const text = longArguments(500);
    const cuts = Array.from({ length: Math.floor(text.length / 256) }, (_unused, index) => (index + 1) * 256);
    const events = streamedCalls([{ text, cuts }]);
    const encoder = new MessageDeltaEncoder({ argumentsFromText: true });
    const decoder = new MessageDeltaDecoder();
    let derived = 0;
    let streamed = 0;
    let shared = 0;
    for (const [index, event] of events.entries()) {
      const end = endFrameOf(encoder, event, index + 1);
      if (end !== undefined) {
        expect(decoder.end(end)).toEqual(event);
        continue;
      }
      const frame = encoder.encode(event);
      if (frame === undefined) {
        decoder.observe(JSON.parse(JSON.stringify(event)) as AgentEvent);
        continue;
      }
      expect(decoder.decode(JSON.parse(JSON.stringify({ ...frame, seq: index + 1 })) as UpdateFrame)).toEqual(event);
      if (event.type !== "message_update" || !("contentIndex" in event.assistantMessageEvent)) continue;
      const provided = event.message.content[0];
      const held = encoder.current?.content[0];
      if (provided?.type !== "toolCall" || held?.type !== "toolCall") continue;
      if (event.assistantMessageEvent.type === "toolcall_delta") streamed += event.assistantMessageEvent.delta.length;
      if (frame.patch?.some((operation) => "j" in operation)) derived++;
      // Derived from 4 KiB of text on: the very object the draft made, the sender made no copy of its own (a megabyte's parse).
      if (derived > 0 && streamed >= 4096) {
        expect(held.arguments).toBe(provided.arguments);
        shared++;
      }
    }
    expect(derived).toBeGreaterThan(4);
    expect(shared).toBeGreaterThan(4);
  });

  it("hold a short call's own arguments too when each event is encoded as the draft makes it, as the server does", () => {
    const text = JSON.stringify({ path: "src/file.ts", line: 42 });
    const draft = new AssistantMessageDraft({ api: "a", provider: "p", model: "m", timestamp: 1 });
    const encoder = new MessageDeltaEncoder({ argumentsFromText: true });
    const encode = (events: ModelEvent[]) => {
      for (const event of events) encoder.encode(event.type === "start" ? { type: "message_start", message: event.partial } : update((event as { partial: AssistantMessage }).partial, event));
    };
    encode(draft.start());
    const { index, events } = draft.openToolCall("c0", "f");
    encode(events);
    let shared = 0;
    for (let from = 0; from < text.length; from += 8) {
      const [delta] = draft.appendToolArguments(index, text.slice(from, from + 8));
      encode(delta === undefined ? [] : [delta]);
      const provided = delta?.type === "toolcall_delta" ? delta.partial.content[index] : undefined;
      const held = encoder.current?.content[index];
      if (provided?.type !== "toolCall" || held?.type !== "toolCall" || Object.keys(provided.arguments).length === 0) continue;
      expect(held.arguments).toBe(provided.arguments);
      shared++;
    }
    expect(shared).toBeGreaterThan(2);
  });

  it("compare the draft's arguments when the deltas it relayed are not the text they were parsed from", () => {
    const text = JSON.stringify({ path: "notes.txt", content: "lorem ipsum ".repeat(20) });
    const events = streamedCalls([{ text, cuts: [10, 40, 80, 120] }]);
    // One delta lost on the way (a middleware's doing): the receivers' text is shorter than the draft's.
    const lost = events.findIndex((event) => event.type === "message_update" && event.assistantMessageEvent.type === "toolcall_delta" && event.assistantMessageEvent.delta === text.slice(40, 80));
    const relayed = events.filter((_event, index) => index !== lost);
    const { frames, decoded } = roundTrip(relayed, { argumentsFromText: true });
    // The arguments go whole from the lost delta on: what the receivers' text parses to differs.
    expect(frames.some((frame) => frame.patch?.some((operation) => "v" in operation && "k" in operation && operation.k === "arguments"))).toBe(true);
    expect(decoded).toEqual(relayed);
  });

  it("send the arguments whole when the provider's differ from what the text parses to", () => {
    const call = { type: "toolCall" as const, id: "c1", name: "f", arguments: {} };
    const started = { ...base, content: [call] };
    // A provider with another partial parser: it keeps the unfinished key's string.
    const own = { ...base, content: [{ ...call, arguments: { city: "Par", ci: "" } }] };
    const same = { ...base, content: [{ ...call, arguments: { city: "Paris" } }] };
    const events: AgentEvent[] = [
      { type: "message_start", message: base },
      update(started, { type: "toolcall_start", contentIndex: 0, partial: started }),
      update(own, { type: "toolcall_delta", contentIndex: 0, delta: '{"city":"Par', partial: own }),
      update(same, { type: "toolcall_delta", contentIndex: 0, delta: 'is"}', partial: same }),
      update(same, { type: "toolcall_end", contentIndex: 0, toolCall: same.content[0] as never, partial: same }),
    ];
    const { frames, decoded } = roundTrip(events, { argumentsFromText: true });
    expect(frames.map((frame) => frame.patch)).toEqual([[{ i: 0, b: call }], [{ i: 0, k: "arguments", v: { city: "Par", ci: "" } }], [{ i: 0, k: "arguments", j: 1 }], undefined]);
    expect(decoded).toEqual(events);
  });

  it("end a message with a patch of what its final form changed: fields, an ended block, a block more or fewer", () => {
    const text = { type: "text" as const, text: "Hello" };
    const call = { type: "toolCall" as const, id: "c1", name: "f", arguments: { city: "Paris" } };
    const streamed = { ...base, content: [text, call] };
    const start: AgentEvent[] = [
      { type: "message_start", message: { ...base, content: [] } },
      update({ ...base, content: [text] }, { type: "text_start", contentIndex: 0, partial: { ...base, content: [text] } }),
      update({ ...base, content: [text] }, { type: "text_end", contentIndex: 0, content: "Hello", partial: { ...base, content: [text] } }),
      update(streamed, { type: "toolcall_start", contentIndex: 1, partial: streamed }),
      update(streamed, { type: "toolcall_end", contentIndex: 1, toolCall: call, partial: streamed }),
    ];
    const finals: AssistantMessage[] = [
      { ...streamed, usage: { ...emptyUsage(), input: 12, output: 3, totalTokens: 15 }, stopReason: "toolUse" },
      { ...streamed, content: [{ type: "text", text: "Hello!" }, call] },
      { ...streamed, content: [text] },
      { ...streamed, content: [text, call, { type: "text", text: "after" }] },
      { ...streamed, errorMessage: "cut short", stopReason: "error" },
    ];
    for (const final of finals) {
      const events = [...start, { type: "message_end", message: final } as AgentEvent];
      const { ends, decoded } = roundTrip(events, { argumentsFromText: true });
      expect(decoded).toEqual(events);
      expect(ends).toHaveLength(1);
      // Only what changed travels: never the unchanged tool call.
      expect(JSON.stringify(ends[0]?.patch ?? [])).not.toContain("Paris");
    }
  });

  it("sends the end of a message whole when none streamed, and an end frame outside a message is an error", () => {
    const encoder = new MessageDeltaEncoder({ argumentsFromText: true });
    const user: AgentMessage = { role: "user", content: "hi", timestamp: 1 };
    expect(encoder.endPatch(user)).toBeUndefined();
    expect(encoder.endPatch({ ...base, content: [{ type: "text", text: "unannounced" }] })).toBeUndefined();
    expect(() => new MessageDeltaDecoder().end({ type: "end", seq: 4 })).toThrow("End frame 4 arrived outside a streaming message.");
  });
});
