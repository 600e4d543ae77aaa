import { describe, expect, it } from "vitest";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import type { ModelEvent, ToolCall } from "../../src/types.js";

function argumentsOf(event: ModelEvent): unknown {
  if (event.type !== "toolcall_delta") return undefined;
  return (event.partial.content[0] as ToolCall).arguments;
}

describe("AssistantMessageDraft tool-call arguments", () => {
  it("parses a long argument now and then, not after every fragment, and in full at the end", () => {
    const draft = new AssistantMessageDraft({ api: "test", provider: "test", model: "test", timestamp: 0 });
    const { index } = draft.openToolCall("call_1", "write_file");
    const content = "x".repeat(100_000);
    const text = JSON.stringify({ path: "a.txt", content });
    const deltas: ModelEvent[] = [];
    for (let offset = 0; offset < text.length; offset += 5) deltas.push(...draft.appendToolArguments(index, text.slice(offset, offset + 5)));
    const end = draft.close(index).find((event) => event.type === "toolcall_end");

    // Why: each parse reads the whole text; after every one of 20,000 fragments that is the square.
    const parses = new Set(deltas.map(argumentsOf)).size;
    expect(deltas).toHaveLength(Math.ceil(text.length / 5));
    expect(parses).toBeLessThan(900);
    expect(argumentsOf(deltas.at(-1)!)).toMatchObject({ path: "a.txt" });
    expect(end?.type === "toolcall_end" ? end.toolCall.arguments : undefined).toStrictEqual({ path: "a.txt", content });
  });
});
