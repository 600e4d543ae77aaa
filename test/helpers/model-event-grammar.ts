import { lastValueFrom, tap, toArray } from "rxjs";
import type { Observable } from "rxjs";
import { expect } from "vitest";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { ModelEvent } from "../../src/types/model.js";

/**
 * Collects a model stream, keeping a deep copy of every event as it was emitted, so a test can
 * prove that later events did not mutate earlier snapshots.
 */
export async function collectModelEvents(stream: Observable<ModelEvent>): Promise<{ events: ModelEvent[]; copies: ModelEvent[] }> {
  const copies: ModelEvent[] = [];
  const events = await lastValueFrom(stream.pipe(tap((event) => copies.push(structuredClone(event))), toArray()));
  return { events, copies };
}

/** The final message of a finished stream: `done.message` or `error.error`. */
export function finalMessage(events: ModelEvent[]): AssistantMessage {
  const last = events[events.length - 1];
  if (last?.type === "done") return last.message;
  if (last?.type === "error") return last.error;
  throw new Error(`stream did not end with done or error (last: ${last?.type ?? "none"})`);
}

function partialOf(event: ModelEvent): AssistantMessage {
  if (event.type === "done") return event.message;
  if (event.type === "error") return event.error;
  return event.partial;
}

const kindOf = { text: "text", thinking: "thinking", toolcall: "toolCall" } as const;

/**
 * Asserts the ModelEvent grammar: `start` first; each block opens with `*_start` at the next
 * content index, gets deltas only while open, and closes with `*_end`; exactly one terminal
 * event, last; deltas append to the block text; snapshots are fresh objects per event and were
 * never mutated (given the copies taken at emission time). Without `finalMessageChecked`, the
 * final message is not held to the blocks streamed (a provider's own final message, passed on
 * as it came: the loop takes it as the truth).
 */
export function assertModelEventGrammar(events: ModelEvent[], copies?: ModelEvent[], { finalMessageChecked = true }: { finalMessageChecked?: boolean } = {}): void {
  expect(events.length).toBeGreaterThanOrEqual(2);
  expect(events[0]?.type).toBe("start");
  expect(partialOf(events[0]!).content).toStrictEqual([]);
  const terminals = events.filter((event) => event.type === "done" || event.type === "error");
  expect(terminals).toHaveLength(1);
  expect(["done", "error"]).toContain(events[events.length - 1]?.type);

  const open = new Map<number, "text" | "thinking" | "toolCall">();
  const texts = new Map<number, string>();
  let opened = 0;
  const seenPartials = new Set<AssistantMessage>();
  const seenArrays = new Set<unknown>();

  events.forEach((event, position) => {
    const partial = partialOf(event);
    expect(seenPartials.has(partial), `event ${position} reuses a partial object`).toBe(false);
    expect(seenArrays.has(partial.content), `event ${position} reuses a content array`).toBe(false);
    seenPartials.add(partial);
    seenArrays.add(partial.content);
    if (position > 0) expect(event.type).not.toBe("start");
    switch (event.type) {
      case "start":
        break;
      case "text_start":
      case "thinking_start":
      case "toolcall_start": {
        const kind = kindOf[event.type.slice(0, -"_start".length) as keyof typeof kindOf];
        expect(event.contentIndex).toBe(opened);
        expect(partial.content).toHaveLength(opened + 1);
        expect(partial.content[event.contentIndex]?.type).toBe(kind);
        open.set(event.contentIndex, kind);
        texts.set(event.contentIndex, "");
        opened++;
        break;
      }
      case "text_delta":
      case "thinking_delta":
      case "toolcall_delta": {
        const kind = kindOf[event.type.slice(0, -"_delta".length) as keyof typeof kindOf];
        expect(open.get(event.contentIndex), `${event.type} for a block that is not open`).toBe(kind);
        expect(event.delta).not.toBe("");
        const text = (texts.get(event.contentIndex) ?? "") + event.delta;
        texts.set(event.contentIndex, text);
        const block = partial.content[event.contentIndex];
        if (block?.type === "text") expect(block.text).toBe(text);
        if (block?.type === "thinking") expect(block.thinking).toBe(text);
        break;
      }
      case "text_end":
      case "thinking_end":
      case "toolcall_end": {
        const kind = kindOf[event.type.slice(0, -"_end".length) as keyof typeof kindOf];
        expect(open.get(event.contentIndex), `${event.type} for a block that is not open`).toBe(kind);
        open.delete(event.contentIndex);
        const block = partial.content[event.contentIndex];
        if (event.type === "text_end") expect(block?.type === "text" && block.text).toBe(event.content);
        if (event.type === "thinking_end") expect(block?.type === "thinking" && block.thinking).toBe(event.content);
        if (event.type === "toolcall_end") {
          expect(block).toStrictEqual(event.toolCall);
          expect(event.toolCall.id).not.toBe("");
        }
        break;
      }
      case "done":
        if (!finalMessageChecked) break;
        expect([...open.keys()], "blocks still open at done").toStrictEqual([]);
        expect(event.message.stopReason).toBe(event.reason);
        expect(event.message.content).toHaveLength(opened);
        expect(event.message.errorMessage).toBeUndefined();
        break;
      case "error":
        if (!finalMessageChecked) break;
        expect(event.error.stopReason).toBe(event.reason);
        expect(event.error.content).toHaveLength(opened);
        expect(typeof event.error.errorMessage).toBe("string");
        expect(event.error.errorMessage).not.toBe("");
        break;
    }
  });
  if (copies) expect(events).toStrictEqual(copies);
}
