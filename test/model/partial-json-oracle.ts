// The partial-JSON parser rxagent used before src/model/partial-json-parser.ts (kept as the test
// oracle only): a scanner remembering the last safe cut, then `JSON.parse` of the text closed
// there. It reads the whole text again for every value, so it was too slow to keep; its answers
// for text cut anywhere are what the new parser must give.
import { MAX_JSON_DEPTH } from "../../src/util/json-depth.js";
import { isLiteralChar } from "../../src/model/json-grammar.js";

/**
 * One open container, linked to the one around it. Why a linked list and not an array: the
 * walk remembers the open containers at every safe cut, and a shared, never-changed chain makes
 * that a pointer copy; copying an array there cost length × depth (48 KB of `[[[…` then `1,1,…`
 * took 12 s, issue 27).
 */
interface OpenContainer {
  readonly kind: "object" | "array";
  readonly outer: OpenContainer | undefined;
  readonly depth: number;
}

/**
 * Reads JSON text fragment by fragment, each character once, remembering the open containers
 * and the last position where cutting would leave valid JSON; `value()` closes the text there
 * and parses it with `JSON.parse`.
 *
 * Why incremental: streamed arguments are parsed again as they grow, and a walk over the whole
 * text each time made a long argument (a file's content in 1 KB fragments) cost time in the
 * square of its length; now the walk is linear and only the native parse is repeated. Text that
 * nests deeper than `MAX_JSON_DEPTH` (see util/json-depth.ts) gives `undefined`. Why the default
 * and not the run's `maxJsonDepth`: a provider parses before any run config reaches it, and a
 * partial is only a guess; under a higher limit the deeper partials stay `{}` while streaming and
 * the complete arguments (JSON.parse of the whole text) are checked against the run's limit.
 */
export class OldPartialJsonScanner {
  /** Everything appended so far. */
  text = "";
  private open: OpenContainer | undefined;
  // Text up to `safeEnd` is a prefix we can close without leaving a dangling key or comma.
  private safeEnd = 0;
  private safeOpen: OpenContainer | undefined;
  private inString = false;
  private stringStart = 0;
  private escaped = false;
  /** Where the run of literal characters (a number, `true`…) at the end of the text starts; -1 for none. */
  private literalStart = -1;
  /** Inside an object, whether the next string is a key: one entry per open container. */
  private readonly expectKey: boolean[] = [];
  /** Set once the text nests deeper than the limit: nothing more is read. */
  private tooDeep = false;

  /** True once the text nests deeper than `MAX_JSON_DEPTH`. */
  get nestsTooDeep(): boolean {
    return this.tooDeep;
  }

  append(fragment: string): void {
    const offset = this.text.length;
    this.text += fragment;
    if (this.tooDeep) return;
    const expectKey = this.expectKey;
    // The fragment is read, not the text: indexing the concatenated text would flatten it every time.
    for (let position = 0; position < fragment.length; position++) {
      const code = fragment.charCodeAt(position);
      const index = offset + position;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (code === BACKSLASH) this.escaped = true;
        else if (code === QUOTE) {
          this.inString = false;
          if (!this.atKey()) this.markSafe(index + 1);
        } else {
          // Jump to the next quote or backslash: long arguments are mostly string (a file's
          // content), and the native search reads them several times faster than this loop.
          STRING_STOP.lastIndex = position + 1;
          const stop = STRING_STOP.exec(fragment);
          position = (stop ? stop.index : fragment.length) - 1;
        }
        continue;
      }
      if (isLiteralChar(code)) {
        if (this.literalStart < 0) this.literalStart = index;
        continue;
      }
      // A complete number or literal followed by more text is safe up to its end.
      if (this.literalStart >= 0) {
        this.literalStart = -1;
        this.markSafe(index);
      }
      switch (code) {
        case QUOTE:
          this.inString = true;
          this.stringStart = index;
          break;
        case OPEN_BRACE:
        case OPEN_BRACKET: {
          const depth = (this.open?.depth ?? 0) + 1;
          if (depth > MAX_JSON_DEPTH) {
            this.tooDeep = true;
            return;
          }
          this.open = { kind: code === OPEN_BRACE ? "object" : "array", outer: this.open, depth };
          expectKey.push(code === OPEN_BRACE);
          this.markSafe(index + 1);
          break;
        }
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          this.open = this.open?.outer;
          expectKey.pop();
          this.markSafe(index + 1);
          break;
        case COLON:
          expectKey[expectKey.length - 1] = false;
          break;
        case COMMA:
          if (this.open?.kind === "object") expectKey[expectKey.length - 1] = true;
          break;
      }
    }
  }

  /** The best guess of the value so far: a fresh parse each call. */
  value(): unknown {
    if (this.tooDeep) return undefined;
    const text = this.text;
    let prefix: string;
    let closing = this.safeOpen;
    if (this.inString && !this.atKey()) {
      // Keep the partial string value, dropping a dangling backslash or a cut \u escape.
      const received = text.slice(this.stringStart);
      const partial = this.escaped ? received.slice(0, -1) : received.slice(0, received.length - cutEscapeLength(received));
      prefix = text.slice(0, this.stringStart) + partial + '"';
      closing = this.open;
    } else if (!this.inString && this.literalStart >= 0 && isCompleteLiteral(text.slice(this.literalStart))) {
      // A number at the very end may still grow (`12` -> `123`), but its value so far is useful.
      prefix = text;
      closing = this.open;
    } else {
      prefix = text.slice(0, this.safeEnd);
    }
    if (prefix.trim() === "") return undefined;
    let closers = "";
    for (let container = closing; container !== undefined; container = container.outer) closers += container.kind === "object" ? "}" : "]";
    try {
      return JSON.parse(prefix + closers);
    } catch {
      return undefined;
    }
  }

  /** Whether the string being read (or just ended) is an object's key. */
  private atKey(): boolean {
    return this.open?.kind === "object" && this.expectKey[this.expectKey.length - 1] === true;
  }

  private markSafe(end: number): void {
    this.safeEnd = end;
    this.safeOpen = this.open;
  }
}

/** What ends a run of ordinary characters in a string. */
const STRING_STOP = /["\\]/g;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * The length of a `\\u` escape cut short at the end of `received` (`\\u00`), else 0. Why only
 * the last five characters are tested: an end-anchored pattern over the whole string is tried
 * at every position, which cost more than the parse at 1 MB of arguments. A backslash that is
 * itself escaped (`\\\\u`: a backslash, then the letter u) starts no escape: an odd number of
 * backslashes before it. (Missing that, this oracle dropped the `\\u` of `"\\\\u`, which the
 * parser rightly keeps; fast-check found it in one seed of thousands.)
 */
function cutEscapeLength(received: string): number {
  const cut = CUT_UNICODE_ESCAPE.exec(received.slice(-5))?.[0].length ?? 0;
  let backslashesBefore = 0;
  for (let index = received.length - cut - 1; cut > 0 && index >= 0 && received.charCodeAt(index) === BACKSLASH; index--) backslashesBefore++;
  return backslashesBefore % 2 === 0 ? cut : 0;
}

const CUT_UNICODE_ESCAPE = /\\u[0-9a-fA-F]{0,3}$/;

/** A literal run at the very end of the text counts only when it is complete (`true`, `12`). */
function isCompleteLiteral(run: string): boolean {
  return /(true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)$/.test(run);
}

/** The old `parsePartialJson`: one scan of `text`, then its value. */
export function oldParsePartialJson(text: string): unknown {
  const scanner = new OldPartialJsonScanner();
  scanner.append(text);
  return scanner.value();
}
