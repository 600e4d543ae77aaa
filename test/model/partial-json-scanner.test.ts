import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { PartialJsonScanner, parsePartialJson } from "../../src/model/partial-json.js";

/** The scanner fed `text` cut at `cuts`, then asked for its value. */
function scannedInFragments(text: string, cuts: readonly number[]): unknown {
  const scanner = new PartialJsonScanner();
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    scanner.append(text.slice(from, cut));
    from = cut;
  }
  scanner.append(text.slice(from));
  return scanner.value();
}

describe("PartialJsonScanner, read fragment by fragment", () => {
  it("gives for every prefix, however it was cut, what one parse of that prefix gives", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value, null, Math.random() < 0.5 ? 0 : 1)),
        fc.nat(),
        fc.array(fc.nat(), { maxLength: 6 }),
        (text, prefixSeed, cutSeeds) => {
          const prefix = text.slice(0, prefixSeed % (text.length + 1));
          const cuts = cutSeeds.map((seed) => seed % (prefix.length + 1));
          expect(scannedInFragments(prefix, cuts)).toStrictEqual(parsePartialJson(prefix));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("keeps the cases a cut inside a literal, an escape or a key makes", () => {
    expect(scannedInFragments('{"a": 12', [6])).toStrictEqual({ a: 12 });
    expect(scannedInFragments('{"a": tr', [7])).toStrictEqual({});
    expect(scannedInFragments('{"a": true, "b": 1', [8, 9])).toStrictEqual({ a: true, b: 1 });
    expect(scannedInFragments('{"a": "x\\u00', [10])).toStrictEqual({ a: "x" });
    expect(scannedInFragments('{"a": "x\\', [8])).toStrictEqual({ a: "x" });
    expect(scannedInFragments('{"a": 1, "ke', [10])).toStrictEqual({ a: 1 });
  });
});

describe("a long argument streamed into the draft", () => {
  it("updates the partial arguments after every fragment up to 4 KiB, then each time they doubled, and ends with the whole value", () => {
    const content = "x".repeat(40_000);
    const text = JSON.stringify({ path: "notes.txt", content });
    const draft = new AssistantMessageDraft({ api: "test", provider: "test", model: "test", timestamp: 0 });
    const { index } = draft.openToolCall("call_1", "write_file");
    const seen: number[] = [];
    for (let offset = 0; offset < text.length; offset += 1024) {
      const [event] = draft.appendToolArguments(index, text.slice(offset, offset + 1024));
      const block = event && "partial" in event ? event.partial.content[index] : undefined;
      const partialContent = block?.type === "toolCall" ? block.arguments["content"] : undefined;
      seen.push(typeof partialContent === "string" ? partialContent.length : -1);
    }
    const [end] = draft.close(index);
    expect(end?.type === "toolcall_end" && end.toolCall.arguments).toStrictEqual({ path: "notes.txt", content });
    expect(end?.type === "toolcall_end" && end.toolCall.rawArguments).toBeUndefined();
    // Lengths of the partial content after each fragment: it changes only where a parse ran.
    const updates = seen.filter((length, position) => position === 0 || length !== seen[position - 1]).length;
    const before = '{"path":"notes.txt","content":"'.length;
    expect(seen.slice(0, 4)).toStrictEqual([1024 - before, 2048 - before, 3072 - before, 4096 - before]);
    expect(updates).toBe(7); // after 1, 2, 3 and 4 KiB, then at 8, 16 and 32 KiB
    expect(seen.includes(-1)).toBe(false);
  });
});
