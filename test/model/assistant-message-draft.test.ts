import { describe, expect, it } from "vitest";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import type { ModelEvent, ToolCall } from "../../src/types.js";
import { isPendingSnapshot } from "../../src/util/shared-content.js";

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

describe("AssistantMessageDraft malformed streamed arguments", () => {
  it("refuses arguments with a comma after nothing, streamed so the first fragment ends inside the next value", () => {
    // The parser took the space before the comma for a run of members: the call ran with arguments JSON.parse refuses.
    const text = `{ ,"path": "${"y".repeat(40)}"}`;
    expect(() => JSON.parse(text) as unknown).toThrow();
    const draft = new AssistantMessageDraft({ api: "test", provider: "test", model: "test", timestamp: 0 });
    const { index } = draft.openToolCall("call_1", "write_file");
    draft.appendToolArguments(index, text.slice(0, 36));
    draft.appendToolArguments(index, text.slice(36));
    const end = draft.close(index).find((event) => event.type === "toolcall_end");
    const toolCall = end?.type === "toolcall_end" ? end.toolCall : undefined;
    expect(toolCall?.arguments).toStrictEqual({});
    expect(toolCall?.rawArguments).toBe(text);
  });
});

describe("AssistantMessageDraft partials of a message of many blocks", () => {
  /** Streams text, then `calls` tool calls, two open at a time, one renamed while open. */
  function stream(calls: number, onEvents: (events: ModelEvent[]) => void): void {
    const draft = new AssistantMessageDraft({ api: "test", provider: "test", model: "test", timestamp: 0 });
    const text = draft.openText();
    onEvents(text.events);
    onEvents(draft.appendText(text.index, "Writing files."));
    let waiting: number | undefined;
    for (let call = 0; call < calls; call++) {
      const { index, events } = draft.openToolCall(call % 7 === 0 ? "" : `call_${call}`, "write_file");
      onEvents(events);
      if (call % 7 === 0) draft.updateToolCall(index, { id: `late_${call}` });
      for (const fragment of ['{"path":', `"f${call}.txt",`, '"line":', `${call}}`]) onEvents(draft.appendToolArguments(index, fragment));
      if (waiting !== undefined) onEvents(draft.close(waiting));
      waiting = index;
    }
    onEvents(draft.appendText(text.index, " Done."));
    onEvents(draft.finish("toolUse"));
  }

  it("each partial, read at any time, is the message as it stood at its event", () => {
    const readAtOnce: string[] = [];
    stream(160, (events) => readAtOnce.push(...events.map((event) => JSON.stringify(event))));
    const kept: ModelEvent[] = [];
    stream(160, (events) => kept.push(...events));

    expect(kept.map((event) => JSON.stringify(event))).toStrictEqual(readAtOnce);
    const last = kept.at(-1);
    expect(last?.type === "done" ? last.message.content.length : 0).toBe(161);
  });

  it("copies no content array for an event of a long message until someone reads it", () => {
    const kept: ModelEvent[] = [];
    stream(1000, (events) => kept.push(...events));
    const late = kept.filter((event) => event.type === "toolcall_delta").at(-1);

    // Why: a copy per event made 10,000 small calls cost time in the square of their count.
    expect(late !== undefined && isPendingSnapshot(late.partial)).toBe(true);
    expect(late?.type === "toolcall_delta" ? late.partial.content.length : 0).toBe(1001);
  });
});
