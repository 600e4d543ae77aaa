import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { contentBlockAt, contentLength, isPendingSnapshot, SharedContent, withMessageFields } from "../../src/util/shared-content.js";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

interface Message {
  role: string;
  content: string[];
  note?: string;
}

/** A content of `count` closed blocks `b0…`, then one open block. */
function longContent(count: number): SharedContent<string> {
  const content = new SharedContent<string>();
  for (let index = 0; index < count; index++) content.close(content.push(`b${index}`));
  content.push("open");
  return content;
}

function snapshotOf(content: SharedContent<string>): Message {
  return content.snapshotInto<Message>({ role: "assistant", content: [] });
}

describe("SharedContent", () => {
  it("copies a short content at once", () => {
    const content = longContent(3);
    const message = snapshotOf(content);
    expect(isPendingSnapshot(message)).toBe(false);
    content.set(3, "changed");
    expect(message.content).toStrictEqual(["b0", "b1", "b2", "open"]);
  });

  it("builds a long content's array only when read, as it stood when the snapshot was taken", () => {
    const content = longContent(200);
    const first = snapshotOf(content);
    content.set(200, "open, grown");
    content.close(200);
    content.push("next");
    const second = snapshotOf(content);
    // A closed block changed later forks the shared array: the snapshots keep theirs.
    content.set(5, "rewritten");

    expect(isPendingSnapshot(first)).toBe(true);
    expect(contentLength(first)).toBe(201);
    expect(contentBlockAt(first, 200)).toBe("open");
    expect(contentBlockAt(first, 5)).toBe("b5");
    expect(contentBlockAt(first, 201)).toBeUndefined();
    expect(contentBlockAt(second, 200)).toBe("open, grown");
    expect(contentBlockAt(second, 201)).toBe("next");

    expect(first.content).toHaveLength(201);
    expect(first.content.slice(-2)).toStrictEqual(["b199", "open"]);
    expect(second.content.slice(-3)).toStrictEqual(["b199", "open, grown", "next"]);
    expect(second.content[5]).toBe("b5");
    expect(snapshotOf(content).content[5]).toBe("rewritten");
    expect(isPendingSnapshot(first)).toBe(false);
  });

  it("reads like a plain message: keys, spread, JSON, structuredClone, deep equality", () => {
    const content = longContent(150);
    const expected = { role: "assistant", content: [...Array.from({ length: 150 }, (_unused, index) => `b${index}`), "open"] };
    expect(Object.keys(snapshotOf(content))).toStrictEqual(["role", "content"]);
    expect({ ...snapshotOf(content) }).toStrictEqual(expected);
    expect(JSON.parse(JSON.stringify(snapshotOf(content)))).toStrictEqual(expected);
    expect(structuredClone(snapshotOf(content))).toStrictEqual(expected);
    expect(snapshotOf(content)).toStrictEqual(expected);
    expect(Object.getOwnPropertySymbols({ ...snapshotOf(content) })).toStrictEqual([]);
  });

  it("keeps the snapshot where no reader finds a key for it, not even Reflect.ownKeys", () => {
    const snapshot = snapshotOf(longContent(150));
    expect(isPendingSnapshot(snapshot)).toBe(true);
    expect(Reflect.ownKeys(snapshot)).toStrictEqual(["role", "content"]);
    expect(Object.getPrototypeOf(snapshot)).toBe(Object.prototype);
  });

  it("adds a content to a message built key by key, where the key belongs", () => {
    const content = longContent(150);
    const message = { role: "assistant" } as Message & { model?: string };
    content.addContentTo(message);
    message.model = "m";
    content.set(150, "open, grown");
    expect(isPendingSnapshot(message)).toBe(true);
    expect(Object.keys(message)).toStrictEqual(["role", "content", "model"]);
    expect(contentBlockAt(message, 150)).toBe("open");
    expect(message.content.at(-1)).toBe("open");
    const short = { role: "assistant" } as Message;
    longContent(2).addContentTo(short);
    expect(short.content).toStrictEqual(["b0", "b1", "open"]);
  });

  it("answers for a value that is not an object instead of throwing", () => {
    expect(isPendingSnapshot(null as unknown as object)).toBe(false);
    expect(isPendingSnapshot("text" as unknown as object)).toBe(false);
    expect(contentLength({ content: "abc" as unknown as string[] })).toBe(3);
  });

  it("makes a long content's snapshot an object of a few fields, not a property table of its own", () => {
    // Every streamed event of a reply of many tool calls carries one, and a run's replay keeps
    // them all: each was a dictionary-mode object (V8) of about 800 bytes, now about 400.
    const content = longContent(200);
    const fields = { role: "assistant", api: "a", provider: "p", model: "m", usage: { input: 0 }, stopReason: "stop", timestamp: 1 };
    const kept: Message[] = [];
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    for (let index = 0; index < 20_000; index++) kept.push(content.snapshotInto<Message>({ ...fields, content: [] }));
    collectGarbage();
    const perSnapshot = (process.memoryUsage().heapUsed - before) / kept.length;
    expect(contentLength(kept[0] as Message)).toBe(201);
    expect(perSnapshot).toBeLessThan(600);
  });

  it("keeps a read or assigned content as the reader left it", () => {
    const content = longContent(150);
    const read = snapshotOf(content);
    read.content.push("mine");
    expect(read.content.at(-1)).toBe("mine");
    expect(contentLength(read)).toBe(152);
    const assigned = snapshotOf(content);
    assigned.content = ["only"];
    expect(assigned.content).toStrictEqual(["only"]);
    expect(contentBlockAt(assigned, 0)).toBe("only");
  });

  it("copies a message's fields without building its content", () => {
    const content = longContent(150);
    const message = snapshotOf(content);
    const copy = withMessageFields(message, { note: "fallback" });
    expect(isPendingSnapshot(copy)).toBe(true);
    expect(Object.keys(copy)).toStrictEqual(["role", "content", "note"]);
    expect(copy.content).toStrictEqual(message.content);
    expect(withMessageFields(message, { content: ["x"] }).content).toStrictEqual(["x"]);
  });

  it("cuts the content to a length, keeping what earlier snapshots saw", () => {
    const content = longContent(150);
    const before = snapshotOf(content);
    content.truncate(10);
    content.push("after the cut");
    expect(before.content).toHaveLength(151);
    expect(before.content[10]).toBe("b10");
    expect(snapshotOf(content).content).toStrictEqual([...Array.from({ length: 10 }, (_unused, index) => `b${index}`), "after the cut"]);
  });
});
