import { describe, expect, it } from "vitest";
import { columnsOf, printable, textColumns, truncateToColumns } from "../../src/cli/terminal-text.js";

describe("terminal text", () => {
  it("removes escape sequences and control characters, keeping newlines", () => {
    expect(printable("hi\u001b]0;pwned\u0007 there\u001b[2J\u001b[H")).toBe("hi there");
    expect(printable("a\u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\b")).toBe("alinkb");
    expect(printable("bell\u0007 back\bspace\rcr \u009b31mC1 csi\u0085 del\u007f")).toBe("bell backspacecr 31mC1 csi del");
    expect(printable("line one\nline\ttwo\u001bc\u001b7")).toBe("line one\nline  two");
    expect(printable("cut off \u001b]0;never ends")).toBe("cut off ");
    expect(printable("漢字 👍🏽 é")).toBe("漢字 👍🏽 é");
  });

  it("counts a CJK character or an emoji as two columns, a combining mark as none", () => {
    expect(["a", "漢", "한", "ｱ", "Ａ", "👍", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "é", "e\u0301", "\u0301"].map(columnsOf)).toStrictEqual([1, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0]);
    expect(textColumns("日本語 ok")).toBe(9);
    expect(truncateToColumns("日本語のテキスト", 7)).toBe("日本語…");
    expect(truncateToColumns("short", 7)).toBe("short");
  });
});
