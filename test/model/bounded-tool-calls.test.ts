import { describe, expect, it } from "vitest";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { boundedMessage, boundedModelEvent, ToolCallBounds, wholeBoundedModelEvent } from "../../src/model/bounded-tool-calls.js";
import { emptyUsage } from "../../src/types/messages.js";
import type { AssistantMessage, ModelEvent, ToolCall } from "../../src/types.js";
import { isPendingSnapshot } from "../../src/util/shared-content.js";

/** A partial of 200 closed calls (the first nests 10 levels deep) and one open call. */
function longPartial(): AssistantMessage {
  const draft = new AssistantMessageDraft({ api: "test", provider: "test", model: "test", timestamp: 0 });
  const deep = `{"value":${"[".repeat(9)}1${"]".repeat(9)}}`;
  for (let call = 0; call < 200; call++) {
    const { index } = draft.openToolCall(`call_${call}`, "write_file");
    draft.appendToolArguments(index, call === 0 ? deep : `{"line":${call}}`);
    draft.close(index);
  }
  const { index } = draft.openToolCall("call_open", "write_file");
  const events: ModelEvent[] = draft.appendToolArguments(index, '{"line":');
  const event = events[0];
  if (event?.type !== "toolcall_delta") throw new Error("expected a toolcall_delta");
  return event.partial;
}

describe("boundedMessage on a long streamed message", () => {
  it("passes a snapshot through unbuilt under the default limit, which the draft's arguments never pass", () => {
    const partial = longPartial();
    expect(boundedMessage(partial, new ToolCallBounds(128))).toBe(partial);
    expect(isPendingSnapshot(partial)).toBe(true);
  });

  it("still bounds every block under a lower limit", () => {
    const bounded = boundedMessage(longPartial(), new ToolCallBounds(5));
    const first = bounded.content[0] as ToolCall;
    expect(first.arguments).toStrictEqual({});
    // The draft parsed the text whole, so the stand-in nests one level past the limit.
    expect(first.rawArguments).toBe("[".repeat(6) + "]".repeat(6));
    expect((bounded.content[1] as ToolCall).arguments).toStrictEqual({ line: 1 });
    expect(bounded.content).toHaveLength(201);
  });
});

describe("boundedModelEvent over one model call's plain partials", () => {
  const call = (index: number, args: unknown = { line: index }): ToolCall => ({ type: "toolCall", id: `call_${index}`, name: "write_file", arguments: args as Record<string, unknown> });
  const message = (content: AssistantMessage["content"]): AssistantMessage => ({
    role: "assistant",
    content,
    api: "test",
    provider: "test",
    model: "test",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "toolUse",
    timestamp: 0,
  });
  const deep = () => ({ value: [[[[[[1]]]]]] });
  /** Arguments that count how often a walk lists their keys. */
  const counted = (walks: { count: number }, value: Record<string, unknown>) =>
    new Proxy(value, {
      ownKeys(target) {
        walks.count++;
        return Reflect.ownKeys(target);
      },
    });
  /** The events of a reply of `calls` tool calls, as a provider streams them with plain partials. */
  function streamedReply(calls: ToolCall[]): ModelEvent[] {
    const events: ModelEvent[] = [{ type: "start", partial: message([]) }];
    const blocks: ToolCall[] = [];
    calls.forEach((toolCall, index) => {
      const opened = { ...toolCall, arguments: {} };
      blocks.push(opened);
      events.push({ type: "toolcall_start", contentIndex: index, partial: message([...blocks]) });
      blocks[index] = toolCall;
      const partial = message([...blocks]);
      events.push({ type: "toolcall_delta", contentIndex: index, delta: "{}", partial });
      events.push({ type: "toolcall_end", contentIndex: index, toolCall, partial });
    });
    events.push({ type: "text_start", contentIndex: calls.length, partial: message([...blocks, { type: "text", text: "" }]) });
    events.push({ type: "done", reason: "toolUse", message: message([...blocks, { type: "text", text: "" }]) });
    return events;
  }
  const messageOf = (event: ModelEvent): AssistantMessage => (event.type === "done" ? event.message : event.type === "error" ? event.error : event.partial);

  it("walks each block once while streaming (n calls cost n walks, not n²/2), and the final message once more", () => {
    const walks = { count: 0 };
    const calls = Array.from({ length: 1000 }, (_, index) => call(index, counted(walks, { line: index })));
    const bounds = new ToolCallBounds(128);
    for (const event of streamedReply(calls)) expect(boundedModelEvent(event, bounds)).toBe(event);
    // 1,000 walks at the events (the same object in the delta, the end's call and later
    // partials passes unread), 1,000 for the final message.
    expect(walks.count).toBe(2000);
  });

  it("replaces a deep call in its own events, in every later partial whatever its index, and in the final message", () => {
    const bounds = new ToolCallBounds(5);
    const events = streamedReply([call(0), call(1, deep()), call(2)]).map((event) => boundedModelEvent(event, bounds));
    for (const event of events.slice(5)) {
      const block = messageOf(event).content[1] as ToolCall;
      expect(block.arguments).toStrictEqual({});
      expect(block.rawArguments).toBe("[".repeat(6) + "]".repeat(6));
      expect(messageOf(event).content[0]).toMatchObject({ arguments: { line: 0 } });
    }
    const end = events.find((event) => event.type === "toolcall_end" && event.contentIndex === 1);
    expect(end?.type === "toolcall_end" && end.toolCall.arguments).toStrictEqual({});
    // The call after it, and the text after all of them, carry the replaced block too.
    expect(events.at(-2)?.type).toBe("text_start");
    expect(events.at(-1)?.type).toBe("done");
  });

  it("bounds a toolcall_end's call that is not its partial's block, and a final message's block no event brought", () => {
    const bounds = new ToolCallBounds(5);
    const first = call(0);
    const partial = message([first]);
    const passing: ModelEvent = { type: "toolcall_end", contentIndex: 0, toolCall: first, partial };
    expect(boundedModelEvent(passing, bounds)).toBe(passing);
    const bounded = boundedModelEvent({ type: "toolcall_end", contentIndex: 0, toolCall: call(0, deep()), partial }, bounds);
    expect(bounded.type === "toolcall_end" && bounded.toolCall.arguments).toStrictEqual({});
    const done = boundedModelEvent({ type: "done", reason: "toolUse", message: message([first, call(1, deep())]) }, bounds);
    expect(done.type === "done" && (done.message.content[1] as ToolCall).arguments).toStrictEqual({});
  });

  it("checks the final message afresh: a block a provider deepened in place after its events passed is replaced", () => {
    const bounds = new ToolCallBounds(5);
    const block = call(0, {});
    const partial = message([block]);
    boundedModelEvent({ type: "toolcall_start", contentIndex: 0, partial }, bounds);
    block.arguments = deep();
    const done = boundedModelEvent({ type: "done", reason: "toolUse", message: partial }, bounds);
    expect(done.type === "done" && (done.message.content[0] as ToolCall).arguments).toStrictEqual({});
  });

  it("checks every block of an event whose contentIndex names no block", () => {
    const bounds = new ToolCallBounds(5);
    const event = { type: "toolcall_delta", contentIndex: "x", delta: "", partial: message([call(0, deep())]) } as unknown as ModelEvent;
    const bounded = boundedModelEvent(event, bounds);
    expect(bounded.type === "toolcall_delta" && (bounded.partial.content[0] as ToolCall).arguments).toStrictEqual({});
  });
});

describe("wholeBoundedModelEvent (recordingModel)", () => {
  it("walks every block of every event: a block changed in place after an earlier event is caught", () => {
    const block: ToolCall = { type: "toolCall", id: "call_0", name: "write_file", arguments: {} };
    const partial = { role: "assistant", content: [block], api: "t", provider: "t", model: "t", usage: emptyUsage(), stopReason: "toolUse", timestamp: 0 } as AssistantMessage;
    const first: ModelEvent = { type: "toolcall_start", contentIndex: 0, partial };
    expect(wholeBoundedModelEvent(first, 5)).toBe(first);
    block.arguments = { value: [[[[[[1]]]]]] };
    const later = wholeBoundedModelEvent({ type: "text_start", contentIndex: 1, partial }, 5);
    expect(later.type === "text_start" && (later.partial.content[0] as ToolCall).arguments).toStrictEqual({});
  });
});
