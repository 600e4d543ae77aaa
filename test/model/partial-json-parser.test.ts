import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { PartialJsonParser, parsedTextLength } from "../../src/model/partial-json-parser.js";
import { MAX_JSON_DEPTH } from "../../src/util/json-depth.js";
import { oldParsePartialJson } from "./partial-json-oracle.js";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/** The parser fed `text` cut at `cuts`. */
function parsedInFragments(text: string, cuts: readonly number[]): PartialJsonParser {
  const parser = new PartialJsonParser();
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    parser.append(text.slice(from, cut));
    from = cut;
  }
  parser.append(text.slice(from));
  return parser;
}

/** A tiny deterministic generator of choices, so a failing case replays from its seed. */
function choices(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

/**
 * JSON text for `value` written as a model might: random whitespace between tokens, and string
 * characters now and then written as `\uXXXX` (upper or lower case), `\/` for `/`.
 */
function writeJson(value: unknown, random: () => number): string {
  const space = (): string => [" ", "", "", "\n  ", "\t", "\r\n"][Math.floor(random() * 6)] as string;
  const string = (text: string): string => {
    let written = "";
    for (const character of JSON.stringify(text).slice(1, -1).match(/\\u[0-9a-f]{4}|\\.|[^]/g) ?? []) {
      if (character.length === 1 && random() < 0.15) {
        const hex = character.charCodeAt(0).toString(16).padStart(4, "0");
        written += `\\u${random() < 0.5 ? hex : hex.toUpperCase()}`;
      } else written += character === "/" && random() < 0.5 ? "\\/" : character;
    }
    return `"${written}"`;
  };
  if (Array.isArray(value)) return `[${space()}${value.map((item) => writeJson(item, random)).join(`${space()},${space()}`)}${space()}]`;
  if (typeof value === "object" && value !== null) {
    const members = Object.entries(value).map(([key, item]) => `${string(key)}${space()}:${space()}${writeJson(item, random)}`);
    return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
  }
  return typeof value === "string" ? string(value) : JSON.stringify(value);
}

/** Any JSON value (strings of any code point, or of ASCII with control characters), written by `writeJson`. */
const jsonText = fc
  .tuple(fc.oneof(fc.jsonValue({ maxDepth: 4, stringUnit: "binary" }), fc.jsonValue({ maxDepth: 4, stringUnit: "binary-ascii" })), fc.nat())
  .map(([value, seed]) => writeJson(value, choices(seed)));

/** Long texts (arrays and objects of many values), where the parser reads runs of whole values at once. */
const longJsonText = fc
  .tuple(
    fc.array(fc.oneof(fc.jsonValue({ maxDepth: 4, stringUnit: "binary-ascii" }), fc.jsonValue({ maxDepth: 2, stringUnit: "binary" })), { minLength: 4, maxLength: 40 }),
    fc.boolean(),
    fc.nat(),
  )
  .map(([values, asObject, seed]) => writeJson(asObject ? Object.fromEntries(values.map((value, index) => [`k${index % 7}`, value])) : values, choices(seed)));

/** The value the parser gives after reading `text` a character at a time (asked after each, so no run is ever read whole). */
function readCharacterByCharacter(text: string): PartialJsonParser {
  const parser = new PartialJsonParser();
  for (const character of text) {
    parser.append(character);
    parser.value();
  }
  return parser;
}

describe("PartialJsonParser, read fragment by fragment", () => {
  it("gives for every prefix, however it was cut, what the old parser (one JSON.parse of the prefix closed) gives", () => {
    fc.assert(
      fc.property(jsonText, fc.nat(), fc.array(fc.nat(), { maxLength: 6 }), (text, prefixSeed, cutSeeds) => {
        const prefix = text.slice(0, prefixSeed % (text.length + 1));
        const cuts = cutSeeds.map((seed) => seed % (prefix.length + 1));
        expect(parsedInFragments(prefix, cuts).value()).toStrictEqual(oldParsePartialJson(prefix));
      }),
      { numRuns: 2000 },
    );
  });

  // The oracle took the u after an escaped backslash for a \u escape cut short and dropped it;
  // the property above failed on it for one seed in a CI run.
  it("keeps the u after an escaped backslash at the end of a prefix, as the oracle now does", () => {
    for (const prefix of ['"\\\\u', '["a\\\\u', '"\\\\u0']) {
      expect([parsedInFragments(prefix, []).value(), oldParsePartialJson(prefix)]).toStrictEqual(Array(2).fill(JSON.parse(`${prefix}"${prefix.startsWith("[") ? "]" : ""}`)));
    }
  });

  it("ends with exactly what JSON.parse gives for the whole text", () => {
    fc.assert(
      fc.property(jsonText, fc.array(fc.nat(), { maxLength: 8 }), (text, cutSeeds) => {
        const parser = parsedInFragments(text, cutSeeds.map((seed) => seed % (text.length + 1)));
        const expected: unknown = JSON.parse(text);
        expect(parser.value()).toStrictEqual(expected);
        expect(parser.completeObject).toStrictEqual(typeof expected === "object" && expected !== null && !Array.isArray(expected) ? expected : undefined);
      }),
      { numRuns: 1000 },
    );
  });

  it("never changes a value it handed out, and shares the closed arrays and objects between them", () => {
    fc.assert(
      fc.property(jsonText, fc.array(fc.nat(), { minLength: 1, maxLength: 12 }), (text, cutSeeds) => {
        const parser = new PartialJsonParser();
        const handedOut: { value: unknown; copy: unknown }[] = [];
        let from = 0;
        for (const cut of [...cutSeeds.map((seed) => seed % (text.length + 1)), text.length].sort((a, b) => a - b)) {
          parser.append(text.slice(from, cut));
          from = cut;
          const value = parser.value();
          handedOut.push({ value, copy: structuredClone(value) });
        }
        for (const { value, copy } of handedOut) expect(value).toStrictEqual(copy);
      }),
      { numRuns: 500 },
    );
    const parser = new PartialJsonParser();
    parser.append('{"records": [{"id": 1}, {"id": 2}], "more": [');
    const first = parser.value() as { records: unknown[]; more: unknown[] };
    parser.append('{"id": 3}');
    const second = parser.value() as { records: unknown[]; more: unknown[] };
    expect(second.records).toBe(first.records);
    expect(second.more).not.toBe(first.more);
    expect(first.more).toStrictEqual([]);
    expect(second.more).toStrictEqual([{ id: 3 }]);
  });

  it("gives the same for long texts, where it reads runs of whole values with one JSON.parse, and ends as JSON.parse", () => {
    fc.assert(
      fc.property(longJsonText, fc.array(fc.nat(), { maxLength: 4 }), (text, cutSeeds) => {
        const cuts = cutSeeds.map((seed) => seed % (text.length + 1)).sort((a, b) => a - b);
        const parser = new PartialJsonParser();
        let from = 0;
        for (const cut of cuts) {
          parser.append(text.slice(from, cut));
          from = cut;
          expect(parser.value()).toStrictEqual(oldParsePartialJson(text.slice(0, cut)));
        }
        parser.append(text.slice(from));
        expect(parser.value()).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it("refuses a long text made malformed anywhere just as it does read a character at a time", () => {
    const faults = [",", "]", "}", ":", '"', "x", " 1", "\\", "\n", "[", "{", "", "tru", "01", ",,"];
    fc.assert(
      fc.property(longJsonText, fc.nat(), fc.nat({ max: faults.length - 1 }), fc.nat(), (text, atSeed, fault, cutSeed) => {
        const at = atSeed % text.length;
        const broken = text.slice(0, at) + faults[fault] + text.slice(at + 1);
        const cut = cutSeed % (broken.length + 1);
        const parser = new PartialJsonParser();
        parser.append(broken.slice(0, cut));
        parser.value();
        parser.append(broken.slice(cut));
        const reference = readCharacterByCharacter(broken);
        expect(parser.value()).toStrictEqual(reference.value());
        let whole: unknown;
        try {
          whole = JSON.parse(broken);
        } catch {
          whole = undefined;
        }
        if (whole !== undefined) expect(parser.value()).toStrictEqual(whole);
        else expect(parser.completeObject).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it("refuses a comma after nothing when the piece ends inside the value after it (whitespace alone is no run)", () => {
    // Found by the test above (seed -1457068214): `{\r,` then a member cut short was read as an object.
    const open = `"${"y".repeat(40)}`;
    for (const text of [`{ ,"k0": {"x": ${open}`, `[ ,[1, ${open}`, `[1, ,[2, ${open}`, `{\r\n,"k": [${open}`]) {
      const parser = new PartialJsonParser();
      parser.append(text);
      expect(parser.value()).toBeUndefined();
      parser.append('"]}');
      expect(parser.completeObject).toBeUndefined();
      expect(parser.value()).toStrictEqual(readCharacterByCharacter(text + '"]}').value());
    }
  });

  it("reads a text of several pieces (past 16 KiB at once) as JSON.parse does", () => {
    const records = Array.from({ length: 3000 }, (_unused, index) => ({ id: index, name: `item "${index}" \u00e9 😀`, tags: ["a", [index, { deep: [index] }]], done: index % 3 === 0 ? null : index % 2 === 0 }));
    const text = JSON.stringify({ path: "notes.txt", content: "lorem \\ ipsum ".repeat(5000), records });
    for (const cuts of [[], [1000, 40_000, 40_001, 150_000], [text.length - 3]]) {
      expect(parsedInFragments(text, cuts).value()).toStrictEqual(JSON.parse(text));
    }
  });

  it("reads a whole object given at once (one JSON.parse) as it reads it a character at a time", () => {
    const objectText = fc
      .tuple(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 8 }), fc.nat())
      .map(([value, seed]) => writeJson(value, choices(seed)));
    fc.assert(
      fc.property(objectText, fc.constantFrom("", " ", "\n "), (text, around) => {
        const whole = new PartialJsonParser();
        whole.append(`${around}${text}${around}`);
        const slow = readCharacterByCharacter(`${around}${text}${around}`);
        expect(whole.value()).toStrictEqual(slow.value());
        expect(whole.completeObject).toStrictEqual(slow.completeObject);
        // What comes after a whole value is refused alike.
        whole.append(", 1");
        slow.append(", 1");
        expect(whole.value()).toStrictEqual(slow.value());
      }),
      { numRuns: 1000 },
    );
    const deep = `{"a":${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}}`;
    const tooDeep = new PartialJsonParser();
    tooDeep.append(deep);
    expect(tooDeep.value()).toBeUndefined();
    expect(tooDeep.nestsTooDeep).toBe(true);
    const proto = new PartialJsonParser();
    proto.append('{"__proto__":{"x":1},"a":1,"a":2}');
    expect(proto.completeObject).toStrictEqual(JSON.parse('{"__proto__":{"x":1},"a":1,"a":2}'));
    expect(Object.getPrototypeOf(proto.completeObject)).toBe(Object.prototype);
  });

  it("keeps the cases a cut inside a literal, an escape or a key makes", () => {
    expect(parsedInFragments('{"a": 12', [6]).value()).toStrictEqual({ a: 12 });
    expect(parsedInFragments('{"a": tr', [7]).value()).toStrictEqual({});
    expect(parsedInFragments('{"a": true, "b": 1', [8, 9]).value()).toStrictEqual({ a: true, b: 1 });
    expect(parsedInFragments('{"a": "x\\u00', [10]).value()).toStrictEqual({ a: "x" });
    expect(parsedInFragments('{"a": "x\\', [8]).value()).toStrictEqual({ a: "x" });
    expect(parsedInFragments('{"a": 1, "ke', [10]).value()).toStrictEqual({ a: 1 });
  });

  it("gives what JSON.parse gives for numbers, escapes, surrogate pairs cut in half, duplicate keys and __proto__", () => {
    const texts = [
      '{"n": [-0, 0, 1e400, -1.5E-3, 12345678901234567890, 0.1, 5e-324]}',
      '{"s": "\\ud83d\\ude00 \\uD83D", "t": "\\"\\\\\\/\\b\\f\\n\\r\\t", "u": "😀é"}',
      '{"a": 1, "b": 2, "a": {"c": 3}, "2": "x", "1": "y"}',
      '{"__proto__": {"polluted": true}, "x": {"__proto__": 1, "__proto__": [2]}}',
      '[[], {}, [[]], "", null, false]',
    ];
    for (const text of texts) {
      for (let cut = 0; cut <= text.length; cut++) {
        const parser = parsedInFragments(text, [cut, Math.floor(cut / 2)]);
        expect(parser.value()).toStrictEqual(JSON.parse(text));
      }
    }
    const proto = parsedInFragments(texts[3] as string, []).completeObject as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toStrictEqual(["__proto__", "x"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("gives undefined from where the text stops being JSON, as JSON.parse refuses it", () => {
    for (const text of ['{"a": 1}}', '{"a": 1,}', "[1,]", '{"a" 1}', '{"a": 01}', '{"a": "x\ny"}', '{"a": "\\x"}', '{"a": "\\u00g0"}', '{"a": 1} x', "\u00a0{}", "{'a': 1}"]) {
      expect(() => JSON.parse(text)).toThrow();
      const parser = parsedInFragments(text, [3]);
      expect(parser.value()).toBeUndefined();
      expect(parser.completeObject).toBeUndefined();
    }
  });

  it(`stops at ${MAX_JSON_DEPTH} levels without recursing: text nested 100,000 deep gives undefined`, () => {
    const parser = parsedInFragments("[".repeat(100_000) + "]".repeat(100_000), [50_000]);
    expect(parser.nestsTooDeep).toBe(true);
    expect(parser.value()).toBeUndefined();
    const deepest = parsedInFragments("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH), [MAX_JSON_DEPTH]);
    expect(deepest.nestsTooDeep).toBe(false);
    expect(deepest.value()).toStrictEqual(JSON.parse("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH)));
  });
});

describe("what a parser vouches for, and what its values keep alive", () => {
  it("says which text length each object it gave out is the parse of, and nothing of other values", () => {
    // Vouched from 4 KiB of text on: shorter ones a receiver parses itself.
    const pad = `{"pad": "${"x".repeat(4096)}", `;
    const parser = new PartialJsonParser();
    parser.append(`${pad}"a": [1, 2`);
    const early = parser.value();
    expect(parsedTextLength(early)).toBe(pad.length + 10);
    parser.append("]}");
    const complete = parser.completeObject;
    expect(complete).toStrictEqual({ pad: "x".repeat(4096), a: [1, 2] });
    expect(parsedTextLength(complete)).toBe(pad.length + 12);
    // The partial handed out earlier still says the length it was parsed at.
    expect(parsedTextLength(early)).toBe(pad.length + 10);
    // Whitespace after a whole value changes nothing but the length the same value now stands for.
    parser.append("  ");
    expect(parser.value()).toBe(complete);
    expect(parsedTextLength(complete)).toBe(pad.length + 14);
    expect(parsedTextLength({ a: [1, 2] })).toBeUndefined();
    expect(parsedTextLength(JSON.parse(`${pad}"a": [1, 2]}`))).toBeUndefined();
    expect(parsedTextLength("text")).toBeUndefined();
    expect(parsedTextLength(null)).toBeUndefined();
    const text = new PartialJsonParser();
    text.append(`"just a string${"x".repeat(4096)}`);
    expect(parsedTextLength(text.value())).toBeUndefined();
  });

  it("vouches for a value of less than 4 KiB of text only while it is the last short one given out", () => {
    const parser = new PartialJsonParser();
    parser.append('{"a": [1, 2');
    const early = parser.value();
    // The server's encoder asks in the same synchronous pass as the draft made the value.
    expect(parsedTextLength(early)).toBe(11);
    parser.append("]}");
    const complete = parser.completeObject;
    expect(parsedTextLength(complete)).toBe(13);
    expect(parsedTextLength(early)).toBeUndefined();
    const other = new PartialJsonParser();
    other.append('{"b": 1}');
    expect(parsedTextLength(other.value())).toBe(8);
    expect(parsedTextLength(complete)).toBeUndefined();
  });

  it("keeps no joined text alive through a string that ended in it", () => {
    // A string read in the same read as 4 MB of numbers after it, over two of the pieces that text
    // is read in: its parts are sliced from the joined text, which V8 kept whole behind the slices.
    const name = `${"n".repeat(20_000)} and the end of the name`;
    const keptString = (): string => {
      const parser = new PartialJsonParser();
      parser.append(`{"name": "${name.slice(0, 10_000)}`);
      parser.append(`${name.slice(10_000)}", "numbers": [${"1234567,".repeat(500_000)}0]}`);
      return (parser.completeObject as { name: string }).name;
    };
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    const kept = keptString();
    // V8 keeps the subject of the last regular-expression match (`RegExp.lastMatch`): a piece of the same text.
    /a/.exec("a");
    collectGarbage();
    const retained = process.memoryUsage().heapUsed - before;
    expect(kept).toBe(name);
    expect(retained).toBeLessThan(1024 * 1024);
  });
});

describe("arguments streamed into the draft", () => {
  const origin = { api: "test", provider: "test", model: "test", timestamp: 0 };

  it("ends a call whose text stopped being JSON with arguments {} and the text in rawArguments", () => {
    const text = '{"path": "a.txt", "lines": [1, 2,], "more": "x"}';
    const draft = new AssistantMessageDraft(origin);
    const { index } = draft.openToolCall("call_1", "write_file");
    const partials: unknown[] = [];
    for (let offset = 0; offset < text.length; offset += 8) {
      const [event] = draft.appendToolArguments(index, text.slice(offset, offset + 8));
      const block = event && "partial" in event ? event.partial.content[index] : undefined;
      partials.push(block?.type === "toolCall" ? block.arguments : undefined);
    }
    expect(partials.slice(0, 4)).toStrictEqual([{}, { path: "a.txt" }, { path: "a.txt" }, { path: "a.txt", lines: [1, 2] }]);
    expect(partials.slice(4)).toStrictEqual(partials.slice(4).map(() => ({})));
    expect(draft.closeIfComplete(index)).toStrictEqual([]);
    const [end] = draft.close(index);
    expect(end?.type === "toolcall_end" && end.toolCall).toMatchObject({ arguments: {}, rawArguments: text });
  });

  it("builds each closed value once: partials and the final arguments share the records that had closed, and never change", () => {
    const records = Array.from({ length: 400 }, (_unused, index) => ({ id: index, tags: ["a", { n: index }] }));
    const text = JSON.stringify({ path: "notes.txt", records });
    const draft = new AssistantMessageDraft(origin);
    const { index } = draft.openToolCall("call_1", "write_file");
    const seen: { value: Record<string, unknown>; copy: unknown }[] = [];
    for (let offset = 0; offset < text.length; offset += 512) {
      const [event] = draft.appendToolArguments(index, text.slice(offset, offset + 512));
      const block = event && "partial" in event ? event.partial.content[index] : undefined;
      if (block?.type === "toolCall" && seen[seen.length - 1]?.value !== block.arguments) seen.push({ value: block.arguments, copy: structuredClone(block.arguments) });
    }
    const [end] = draft.close(index);
    const final = end?.type === "toolcall_end" ? (end.toolCall.arguments as { records: unknown[] }) : undefined;
    expect(final).toStrictEqual(JSON.parse(text));
    const last = seen[seen.length - 1]?.value as { records: unknown[] };
    expect(last.records.length).toBeGreaterThan(100);
    expect(final?.records[0]).toBe(last.records[0]);
    expect(final?.records[99]).toBe(last.records[99]);
    for (const { value, copy } of seen) expect(value).toStrictEqual(copy);
  });

  it("closes early a call whose whole arguments nest deeper than the limit (JSON.parse judges them), with the text in rawArguments", () => {
    const text = `{"a": ${"[".repeat(MAX_JSON_DEPTH + 5)}${"]".repeat(MAX_JSON_DEPTH + 5)}}`;
    const draft = new AssistantMessageDraft(origin);
    const { index } = draft.openToolCall("call_1", "deep");
    draft.appendToolArguments(index, text.slice(0, -1));
    expect(draft.closeIfComplete(index)).toStrictEqual([]);
    draft.appendToolArguments(index, text.slice(-1));
    const [end] = draft.closeIfComplete(index);
    expect(end?.type === "toolcall_end" && end.toolCall).toMatchObject({ arguments: {}, rawArguments: text });
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
