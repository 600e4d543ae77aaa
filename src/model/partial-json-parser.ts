import { MAX_JSON_DEPTH, nestsDeeperThan } from "../util/json-depth.js";
import {
  BACKSLASH,
  CARRIAGE_RETURN,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  ESCAPES,
  hexValue,
  isLiteralChar,
  isPlainObject,
  LETTER_U,
  literalValue,
  NEWLINE,
  NOT_A_LITERAL,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  SPACE,
  TAB,
} from "./json-grammar.js";
import { readArrayRun, readObjectRun, RUN_DEPTH } from "./json-runs.js";
import { addClosedValue, newContainer, type OpenContainer, snapshotOpen } from "./open-containers.js";

// What the parser expects next. Numbers, not strings: the state is read for every character.
const EXPECT_VALUE = 0;
/** Just after `[`: a value or `]`. */
const EXPECT_VALUE_OR_CLOSE = 1;
/** Just after `{`: a key or `}`. */
const EXPECT_KEY_OR_CLOSE = 2;
const EXPECT_KEY = 3;
const EXPECT_COLON = 4;
/** After a value: `,` or the container's closer; at the top level only whitespace. */
const AFTER_VALUE = 5;
const IN_STRING = 6;
/** Just after a backslash in a string. */
const IN_ESCAPE = 7;
/** Reading the four hex digits after `\u`. */
const IN_UNICODE = 8;
/** Reading a number, `true`, `false` or `null`. */
const IN_LITERAL = 9;
/** The text is not JSON: nothing more is read. */
const FAILED = 10;
/** The text nests deeper than `MAX_JSON_DEPTH`: nothing more is read. */
const TOO_DEEP = 11;

/**
 * The text length each object a `PartialJsonParser` gave out was parsed from (see
 * `parsedTextLength`). Module-private: only the parser can vouch for a value.
 */
const PARSED_TEXT_LENGTHS = new WeakMap<object, number>();

/**
 * The length of the text `value` is the parse of, when a `PartialJsonParser` gave it out (a guess
 * from `value()`, or `completeObject`); else `undefined`. Known for a value of 4 KiB of text or
 * more for as long as it lives, for a shorter one while it is the last short value any parser
 * gave out (see `VOUCHED_FROM_LENGTH`). Why: a receiver that has the same text (the server's delta
 * encoder, which keeps the `toolcall_delta`s it relays) knows without parsing or comparing that
 * the value is what its own parse would give. Parsing it again and comparing was most of the
 * server's garbage for 1 MB of streamed arguments (bench/README.md).
 */
export function parsedTextLength(value: unknown): number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  return value === lastShortValue ? lastShortLength : PARSED_TEXT_LENGTHS.get(value);
}

/** The last value parsed from fewer than `VOUCHED_FROM_LENGTH` characters, and their count. */
let lastShortValue: object | undefined;
let lastShortLength = 0;

function vouched<Value>(value: Value, textLength: number): Value {
  if (typeof value !== "object" || value === null) return value;
  if (textLength >= VOUCHED_FROM_LENGTH) PARSED_TEXT_LENGTHS.set(value, textLength);
  else {
    lastShortValue = value;
    lastShortLength = textLength;
  }
  return value;
}

/**
 * From this many characters on a value is entered in the WeakMap; a shorter one only in the
 * one-value slot above. Why: a WeakMap entry for every guess of every small call was the draft's
 * largest cost after its snapshots (10,000 small calls in 16-character deltas, a CPU profile of
 * `bench/partial-json.ts`: 18% of the time), paid even where no receiver asks (an agent without
 * a server). The server's encoder reads a value in the same synchronous pass as the draft made
 * it, so the slot still has it; where it does not (events that waited), the encoder parses the
 * short text itself and compares. The slot keeps at most one small value alive.
 */
const VOUCHED_FROM_LENGTH = 4096;

/**
 * `part` as a string of its own. Why: V8 makes a slice of 13 characters or more a view that keeps
 * its whole parent alive, and the parts of a string read here are slices of the text joined for
 * reading: the content of 1 MB of streamed arguments kept the 339 KB joined after it (`npm run
 * bench:stream-e2e`). A concatenation is flattened before it is sliced, so the copy's parent is
 * its own. Fragments wholly inside a string (a file's content) are added as they came, uncopied.
 */
function detached(part: string): string {
  return part.length < 13 ? part : ` ${part}`.slice(1);
}

/**
 * Parses JSON text fragment by fragment, keeping its state between them and building the value as
 * it goes; `value()` gives the best guess of the value so far at any point. Each character is read
 * once: by the loop here, or by one regular-expression match and one `JSON.parse` of a run of whole
 * values around it (json-runs.ts); a search that finds no run may read on to the piece's end, at
 * most `FAILED_RUNS_PER_FRAGMENT` times a piece. So the time is linear in the text's length.
 *
 * Streamed tool-call arguments arrive as fragments (`{"ci`, `ty": "Par`, ...); a UI wants the
 * fields already known, and the loop wants the whole value at the end. An unfinished string keeps
 * the characters received, an unfinished key or literal is dropped, open arrays and objects are
 * closed (as `parsePartialJson` documents).
 *
 * Why values are built here and not by `JSON.parse` of the text closed at a cut: each such parse
 * reads the whole text again, so a long argument (a file's content in 1 KB fragments) cost a
 * parse per partial plus one at the end (7–18x one `JSON.parse` for 1 MB, bench/README.md). Here
 * a value is built once, when it closes; a closed array or object never changes again, so every
 * partial shares it, and `value()` copies only the open containers along the rightmost path (a
 * partial handed out never changes afterwards: events and UIs keep them). The final value is the
 * parser's own, equal to `JSON.parse` of the text (duplicate keys: the last wins; `__proto__` an
 * own key).
 *
 * Text that nests deeper than `MAX_JSON_DEPTH` gives `undefined` (an explicit stack: no depth
 * reaches the JS stack). Why the default and not the run's `maxJsonDepth`: a provider parses
 * before any run config reaches it, and a partial is only a guess; under a higher limit the
 * deeper partials stay `{}` while streaming and the complete arguments are checked against the
 * run's limit. Text that stops being JSON (a character no JSON could continue with, or a literal
 * that ends malformed) gives `undefined` from there on, as `JSON.parse` of it would fail.
 */
export class PartialJsonParser {
  /** Everything appended so far. */
  text = "";
  /** Fragments appended since the text was last read. */
  private readonly unread: string[] = [];
  private state = EXPECT_VALUE;
  /** The open containers, outermost first. */
  private readonly open: OpenContainer[] = [];
  /** The top-level value once it is complete. */
  private root: unknown = undefined;
  /** The string being read, unescaped, so far. */
  private stringValue = "";
  private stringIsKey = false;
  private unicodeDigits = 0;
  private unicodeCode = 0;
  /** The number or literal being read, as text, so far. */
  private literal = "";

  /** True once the text nests deeper than `MAX_JSON_DEPTH`. */
  get nestsTooDeep(): boolean {
    this.readUnread();
    return this.state === TOO_DEEP;
  }

  /** The value when the text so far is one whole JSON object (whitespace around it allowed), else `undefined`. */
  get completeObject(): Record<string, unknown> | undefined {
    this.readUnread();
    return this.state === AFTER_VALUE && this.open.length === 0 && isPlainObject(this.root) ? vouched(this.root, this.text.length) : undefined;
  }

  /**
   * Adds a fragment of the text. It is read when a value is next asked for: why not at once,
   * a caller that asks now and then (the draft, as the text doubles) lets the parser read many
   * fragments together, in longer runs and with fewer calls (see `readUnread`).
   */
  append(fragment: string): void {
    if (fragment === "") return;
    this.text += fragment;
    this.unread.push(fragment);
  }

  /**
   * Reads the fragments appended since the last read, joined, in pieces of at most
   * `READ_PIECE_LENGTH`. Why pieces: a run's regular expression keeps a backtracking entry per
   * character it matched, and a piece bounds that; why joined: fewer, longer runs for `JSON.parse`.
   */
  private readUnread(): void {
    const unread = this.unread;
    if (unread.length === 0) return;
    if (this.readWhole()) return;
    let first = 0;
    // Fragments wholly inside a string (a file's content) are added as they are: joining them
    // first would copy them for nothing (a third of the time at 1 MB).
    while (first < unread.length && this.state === IN_STRING && !STRING_STOP_ANYWHERE.test(unread[first] as string)) this.stringValue += unread[first++] as string;
    // Joined a piece at a time, not all at once: a join of hundreds of KB is made in V8's
    // large-object space and stays until a full GC, garbage the size of the text read (the
    // server's peak heap for 1 MB of streamed arguments, `npm run bench:stream-e2e`).
    let piece: string[] = [];
    let pieceLength = 0;
    for (let index = first; index < unread.length; index++) {
      const fragment = unread[index] as string;
      if (pieceLength > 0 && pieceLength + fragment.length > READ_PIECE_LENGTH) {
        this.readPiece(piece.length === 1 ? (piece[0] as string) : piece.join(""));
        piece = [];
        pieceLength = 0;
      }
      piece.push(fragment);
      pieceLength += fragment.length;
    }
    unread.length = 0;
    if (pieceLength > 0) this.readPiece(piece.length === 1 ? (piece[0] as string) : piece.join(""));
  }

  /** Reads `text` in pieces of at most `READ_PIECE_LENGTH` (see `readUnread`). */
  private readPiece(text: string): void {
    if (text.length <= READ_PIECE_LENGTH) return this.read(text);
    for (let from = 0; from < text.length; from += READ_PIECE_LENGTH) this.read(text.slice(from, from + READ_PIECE_LENGTH));
  }

  /**
   * A first read that is one whole small object (a small call's arguments in one fragment) is
   * handed to `JSON.parse` at once, instead of this loop. Measured: 10,000 calls of 70 bytes, each
   * in one delta, through the draft in a fresh process: 175 -> 157 ms CPU (medians of 3, load 7-9;
   * `npm run bench:partial-json`). Returns false, having read nothing, when the text is not that.
   */
  private readWhole(): boolean {
    if (this.state !== EXPECT_VALUE || this.open.length > 0 || this.text.length > WHOLE_AT_ONCE_UP_TO) return false;
    const text = this.text;
    if (!WHOLE_OBJECT_LOOK.test(text)) return false;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return false;
    }
    // Past the limit the loop reads it, to say so (TOO_DEEP).
    if (!isPlainObject(value) || nestsDeeperThan(value)) return false;
    this.unread.length = 0;
    this.root = value;
    this.state = AFTER_VALUE;
    return true;
  }

  private read(fragment: string): void {
    const length = fragment.length;
    let position = 0;
    let runsToTry = FAILED_RUNS_PER_FRAGMENT;
    // The fragment is read, not the text: indexing the concatenated text would flatten it every time.
    while (position < length) {
      const state = this.state;
      if (state === IN_STRING) position = this.readString(fragment, position);
      else if (state === IN_LITERAL) position = this.readLiteral(fragment, position);
      else if (state === IN_ESCAPE) this.readEscape(fragment.charCodeAt(position++));
      else if (state === IN_UNICODE) this.readHexDigit(fragment.charCodeAt(position++));
      else if (state >= FAILED) return;
      else {
        if (state <= EXPECT_KEY && runsToTry > 0 && length - position >= SHORTEST_RUN) {
          const end = this.readRun(fragment, position, state);
          if (end > position) {
            position = end;
            continue;
          }
          runsToTry--;
        }
        const code = fragment.charCodeAt(position);
        if (code === SPACE || code === NEWLINE || code === CARRIAGE_RETURN || code === TAB) position++;
        // A literal's first character is read again as part of it.
        else if (isLiteralChar(code) && state <= EXPECT_VALUE_OR_CLOSE) {
          this.literal = "";
          this.state = IN_LITERAL;
        } else {
          this.readStructural(code, state);
          position++;
        }
      }
    }
  }

  /**
   * The best guess of the value so far (`undefined` when nothing usable has arrived). Closed
   * arrays and objects in it are shared with earlier and later guesses and the final value; the
   * open ones are fresh copies.
   */
  value(): unknown {
    this.readUnread();
    const state = this.state;
    if (state >= FAILED) return undefined;
    let inner: unknown;
    let hasInner = false;
    if ((state === IN_STRING || state === IN_ESCAPE || state === IN_UNICODE) && !this.stringIsKey) {
      // A cut escape (`\`, `\u00`) is left out until it is whole.
      inner = this.stringValue;
      hasInner = true;
    } else if (state === IN_LITERAL) {
      // A number at the very end may still grow (`12` -> `123`), but its value so far is useful.
      const literal = literalValue(this.literal);
      if (literal !== NOT_A_LITERAL) {
        inner = literal;
        hasInner = true;
      }
    }
    if (this.open.length === 0) return hasInner ? inner : vouched(this.root, this.text.length);
    return vouched(snapshotOpen(this.open, inner, hasInner), this.text.length);
  }

  /**
   * Reads the whole array elements or object members that start at `position` with one match and
   * one `JSON.parse` (see json-runs.ts); returns where they end, or -1 when none is whole in this
   * fragment (the caller then reads on a character at a time).
   */
  private readRun(fragment: string, position: number, state: number): number {
    const open = this.open;
    const container = open[open.length - 1];
    // The run's values must not take the text past the depth limit unseen.
    if (container === undefined || open.length + RUN_DEPTH > MAX_JSON_DEPTH) return -1;
    const end = container.array !== undefined ? (state <= EXPECT_VALUE_OR_CLOSE ? readArrayRun(container.array, fragment, position) : -1) : state >= EXPECT_KEY_OR_CLOSE ? readObjectRun(container.object as Record<string, unknown>, fragment, position) : -1;
    if (end >= 0) this.state = AFTER_VALUE;
    return end;
  }

  private readStructural(code: number, state: number): void {
    switch (code) {
      case QUOTE:
        if (state <= EXPECT_KEY) {
          this.stringIsKey = state === EXPECT_KEY_OR_CLOSE || state === EXPECT_KEY;
          this.stringValue = "";
          this.state = IN_STRING;
          return;
        }
        break;
      case OPEN_BRACE:
      case OPEN_BRACKET:
        if (state <= EXPECT_VALUE_OR_CLOSE) return this.openContainer(code === OPEN_BRACKET);
        break;
      case CLOSE_BRACKET:
        if ((state === EXPECT_VALUE_OR_CLOSE || state === AFTER_VALUE) && this.open[this.open.length - 1]?.array !== undefined) return this.closeContainer();
        break;
      case CLOSE_BRACE:
        if ((state === EXPECT_KEY_OR_CLOSE || state === AFTER_VALUE) && this.open[this.open.length - 1]?.object !== undefined) return this.closeContainer();
        break;
      case COLON:
        if (state === EXPECT_COLON) {
          this.state = EXPECT_VALUE;
          return;
        }
        break;
      case COMMA: {
        const container = this.open[this.open.length - 1];
        if (state === AFTER_VALUE && container !== undefined) {
          this.state = container.array !== undefined ? EXPECT_VALUE : EXPECT_KEY;
          return;
        }
        break;
      }
    }
    this.state = FAILED;
  }

  private openContainer(isArray: boolean): void {
    if (this.open.length >= MAX_JSON_DEPTH) {
      this.state = TOO_DEEP;
      return;
    }
    this.open.push(newContainer(isArray));
    this.state = isArray ? EXPECT_VALUE_OR_CLOSE : EXPECT_KEY_OR_CLOSE;
  }

  private closeContainer(): void {
    const closed = this.open.pop() as OpenContainer;
    this.completeValue(closed.array ?? closed.object);
  }

  /** A value has ended: it goes into the open container, or is the top-level value. */
  private completeValue(value: unknown): void {
    const open = this.open;
    this.state = AFTER_VALUE;
    if (open.length === 0) {
      this.root = value;
      return;
    }
    addClosedValue(open[open.length - 1] as OpenContainer, value);
  }

  /** Reads string characters from `position`; returns where reading stopped. */
  private readString(fragment: string, position: number): number {
    const length = fragment.length;
    for (let index = position; index < length; index++) {
      const code = fragment.charCodeAt(index);
      if (code === QUOTE || code === BACKSLASH) {
        if (index > position) this.stringValue += detached(fragment.slice(position, index));
        if (code === BACKSLASH) this.state = IN_ESCAPE;
        else this.endString();
        return index + 1;
      }
      if (code < 0x20) {
        // JSON.parse refuses control characters inside a string.
        this.state = FAILED;
        return length;
      }
      if (index - position === LOOP_BEFORE_SEARCH) {
        // A long run (a file's content): the native search reads it several times faster than this loop.
        STRING_STOP.lastIndex = index + 1;
        const stop = STRING_STOP.exec(fragment);
        index = (stop === null ? length : stop.index) - 1;
      }
    }
    this.stringValue += detached(position === 0 ? fragment : fragment.slice(position));
    return length;
  }

  private endString(): void {
    if (!this.stringIsKey) return this.completeValue(this.stringValue);
    (this.open[this.open.length - 1] as OpenContainer).key = this.stringValue;
    this.state = EXPECT_COLON;
  }

  private readEscape(code: number): void {
    const escaped = ESCAPES[code];
    if (escaped !== undefined) {
      this.stringValue += escaped;
      this.state = IN_STRING;
    } else if (code === LETTER_U) {
      this.unicodeDigits = 0;
      this.unicodeCode = 0;
      this.state = IN_UNICODE;
    } else this.state = FAILED;
  }

  private readHexDigit(code: number): void {
    const digit = hexValue(code);
    if (digit < 0) {
      this.state = FAILED;
      return;
    }
    this.unicodeCode = this.unicodeCode * 16 + digit;
    if (++this.unicodeDigits < 4) return;
    // One UTF-16 unit, as JSON.parse gives it: a lone surrogate stays lone, a pair joins by concatenation.
    this.stringValue += String.fromCharCode(this.unicodeCode);
    this.state = IN_STRING;
  }

  /** Reads literal characters from `position`; returns where reading stopped. */
  private readLiteral(fragment: string, position: number): number {
    const length = fragment.length;
    let index = position;
    while (index < length && isLiteralChar(fragment.charCodeAt(index))) index++;
    this.literal += fragment.slice(position, index);
    // Judged once it ends: until then `1.` or `tr` may still become valid.
    if (index < length) {
      const value = literalValue(this.literal);
      if (value === NOT_A_LITERAL) this.state = FAILED;
      else this.completeValue(value);
    }
    return index;
  }
}

/** The longest first read `readWhole` hands to `JSON.parse`: small calls; a long text is read in pieces. */
const WHOLE_AT_ONCE_UP_TO = 4096;
/** What a text `readWhole` tries looks like: an object, whitespace around it. */
const WHOLE_OBJECT_LOOK = /^[ \t\n\r]*\{[^]*\}[ \t\n\r]*$/;

/** The longest piece of text read at once (see `readUnread`). */
const READ_PIECE_LENGTH = 16 * 1024;
/**
 * How many characters a fragment must have left for a run to be looked for: fewer are read as
 * fast a character at a time (the 16-byte fragments of many small calls).
 */
const SHORTEST_RUN = 32;
/**
 * How many times per fragment a run may be looked for in vain. Why a limit: a failed match can
 * read on to the fragment's end, and an unfinished value nested n levels would be looked into
 * n times; a few tries cover the cut record of a long array (the array, then the record).
 */
const FAILED_RUNS_PER_FRAGMENT = 4;
/** How many string characters the loop reads before it hands the rest of the run to `STRING_STOP`. */
const LOOP_BEFORE_SEARCH = 32;
/** What ends a run of ordinary characters in a string. */
const STRING_STOP = /["\\\u0000-\u001f]/g;
const STRING_STOP_ANYWHERE = /["\\\u0000-\u001f]/;

