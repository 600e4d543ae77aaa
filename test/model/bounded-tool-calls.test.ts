import { describe, expect, it } from "vitest";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { boundedMessage, toolCallBoundsOf } from "../../src/model/bounded-tool-calls.js";
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
