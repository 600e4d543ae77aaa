import { describe, expect, it } from "vitest";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { boundedMessage, boundedModelEvent, forOneCall, toolCallBoundsOf } from "../../src/model/bounded-tool-calls.js";
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
    expect(boundedMessage(partial, toolCallBoundsOf(128))).toBe(partial);
    expect(isPendingSnapshot(partial)).toBe(true);
  });

  it("still bounds every block under a lower limit", () => {
    const bounded = boundedMessage(longPartial(), toolCallBoundsOf(5));
    const first = bounded.content[0] as ToolCall;
    expect(first.arguments).toStrictEqual({});
    // The draft parsed the text whole, so the stand-in nests one level past the limit.
    expect(first.rawArguments).toBe("[".repeat(6) + "]".repeat(6));
    expect((bounded.content[1] as ToolCall).arguments).toStrictEqual({ line: 1 });
    expect(bounded.content).toHaveLength(201);
  });
});

describe("boundedMessage over one model call's plain partials", () => {
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
  /** Bounds for one call whose shared checked-map counts its lookups. */
  const countedBounds = (limit: number) => {
    const lookups = { count: 0 };
    class CountingWeakMap extends WeakMap<ToolCall, ToolCall> {
      override get(key: ToolCall) {
        lookups.count++;
        return super.get(key);
      }
    }
    return { bounds: forOneCall({ limit, checked: new CountingWeakMap() }), lookups };
  };

  it("looks up only the blocks that are new since the last partial that passed: a reply of n calls costs n lookups, not n²/2", () => {
    const { bounds, lookups } = countedBounds(128);
    const blocks: ToolCall[] = [];
    for (let index = 0; index < 1000; index++) {
      blocks.push(call(index));
      const partial = message([...blocks]);
      expect(boundedMessage(partial, bounds)).toBe(partial);
    }
    // One lookup per block (the WeakMap walk per event made it 500,500).
    expect(lookups.count).toBe(1000);
  });

  it("still checks a block that replaced one at an index already passed, and a deep one after shallow ones", () => {
    const { bounds } = countedBounds(5);
    const deep = { value: [[[[[[1]]]]]] };
    const first = message([call(0), call(1)]);
    expect(boundedMessage(first, bounds)).toBe(first);
    const replaced = boundedMessage(message([call(0), call(1, deep)]), bounds);
    expect((replaced.content[1] as ToolCall).arguments).toStrictEqual({});
    expect((replaced.content[1] as ToolCall).rawArguments).toBe("[".repeat(6) + "]".repeat(6));
    // The same object as the first partial's block 0 passes; the replaced block is bounded again in the next partial.
    const next = boundedMessage(message([first.content[0]!, call(1, deep), call(2)]), bounds);
    expect((next.content[1] as ToolCall).arguments).toStrictEqual({});
    expect(next.content[0]).toBe(first.content[0]);
  });

  it("takes a toolcall_end's call as checked when its partial just passed with it, and bounds one that differs from the partial's block", () => {
    const { bounds, lookups } = countedBounds(5);
    const deep = { value: [[[[[[1]]]]]] };
    const first = call(0);
    const partial = message([first]);
    const end = (toolCall: ToolCall): ModelEvent => ({ type: "toolcall_end", contentIndex: 0, toolCall, partial });
    const passing = end(first);
    expect(boundedModelEvent(passing, bounds)).toBe(passing);
    expect(lookups.count).toBe(1);
    // The same partial again costs nothing; a call that is not the partial's block is looked up and bounded.
    const bounded = boundedModelEvent(end(call(0, deep)), bounds);
    expect(lookups.count).toBe(2);
    expect(bounded.type === "toolcall_end" && bounded.toolCall.arguments).toStrictEqual({});
  });
});
