/**
 * Model and tool text made safe and measurable for a terminal. A reply is untrusted: an
 * escape sequence in it could set the window title, clear the screen or move the cursor
 * under the live area. The screen writes its own codes (`ansi.ts`) around the text it gets
 * from here, so nothing here removes anything the renderer means to write.
 */

// ESC followed by: a CSI sequence (ESC [ … final byte), an OSC/DCS/SOS/PM/APC string up to BEL
// or ST, or any one character (ESC 7, ESC c, …). An unterminated string runs to the end.
const escapeSequence = /\u001b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[\s\S]?)/g;
// C0 controls but newline and tab, DEL, and the C1 controls (U+0080–U+009F, among them the one-byte CSI U+009B).
const controlCharacter = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` without escape sequences and control characters; a newline stays, a tab becomes
 * two spaces (the screen counts columns, and a tab's width depends on where it falls).
 * @example printable("hi\u001b]0;pwned\u0007 there\u001b[2J") // "hi there"
 */
export function printable(text: string): string {
  return text.replace(escapeSequence, "").replace(controlCharacter, "").replaceAll("\t", "  ");
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The user-perceived characters of `text` (an emoji with its modifiers is one). */
export function graphemes(text: string): string[] {
  return Array.from(segmenter.segment(text), (segment) => segment.segment);
}

// East Asian Wide and Fullwidth (Unicode UAX #11), in the ranges a reply meets: Hangul Jamo,
// CJK punctuation, kana, CJK ideographs and their extensions, Hangul syllables, fullwidth forms.
const eastAsianWide =
  /^[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{1b000}-\u{1b2ff}\u{20000}-\u{3fffd}]/u;
const emoji = /^(?:\p{Emoji_Presentation}|\p{Extended_Pictographic}\ufe0f|\p{Regional_Indicator})/u;
const zeroWidth = /^[\p{Mn}\p{Me}\u200b-\u200f\u2060\ufeff]+$/u;

/**
 * How many terminal columns a grapheme takes: 2 for East Asian wide characters and emoji, 0
 * for a lone combining mark or zero-width character, else 1.
 * @example [columnsOf("a"), columnsOf("漢"), columnsOf("👍🏽")] // [1, 2, 2]
 */
export function columnsOf(grapheme: string): number {
  if (grapheme === "" || zeroWidth.test(grapheme)) return 0;
  return eastAsianWide.test(grapheme) || emoji.test(grapheme) ? 2 : 1;
}

/** The columns `text` takes on one terminal row. */
export function textColumns(text: string): number {
  let columns = 0;
  for (const grapheme of graphemes(text)) columns += columnsOf(grapheme);
  return columns;
}

/** `text` cut to `width` columns, ending in "…" when cut. */
export function truncateToColumns(text: string, width: number): string {
  if (textColumns(text) <= width) return text;
  let kept = "";
  let columns = 0;
  for (const grapheme of graphemes(text)) {
    const next = columnsOf(grapheme);
    if (columns + next > width - 1) break;
    kept += grapheme;
    columns += next;
  }
  return `${kept}…`;
}
