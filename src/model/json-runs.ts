import { setProperty } from "./json-grammar.js";

/**
 * Finds runs of whole JSON values in a piece of text with one native regular-expression match,
 * so `PartialJsonParser` can hand them to `JSON.parse` in one call instead of reading them a
 * character at a time in JavaScript.
 *
 * Why: streamed arguments are often long arrays of small records, and a parser written in
 * JavaScript runs interpreted until the engine has compiled it, at many times the cost of
 * `JSON.parse` per character; a process's first long argument paid that (1 MB in 1 KB fragments:
 * 40–50 ms of CPU against 6–8 for one `JSON.parse`, `npm run bench:partial-json`).
 *
 * The expressions only find where a run ends; `JSON.parse` judges it (a run it refuses is read a
 * character at a time, which finds the fault). Why loose: an expression that checks JSON's grammar
 * nested two levels was a few KB long, and compiling it cost as much as parsing 1 MB. A run is
 * values separated by commas, each followed by `,` or the container's closer in the same piece,
 * so a number cut at the piece's end (`12` of `123`) is never taken as whole; a value nests at most
 * `RUN_DEPTH` levels. Each step reads one character or a whole string or bracket, and no
 * quantifier is nested in another over the same characters, so a failed match backtracks in
 * linear time.
 */

/** How many levels of arrays and objects a value found in a run may nest. */
export const RUN_DEPTH = 3;

/** A whole string, escapes included (the form of Friedl's "unrolled loop"). */
const STRING = '"[^"\\\\]*(?:\\\\.[^"\\\\]*)*"';
/** One character of a value outside strings and brackets: of a number, a literal, a colon… */
const PLAIN = '[^\\[\\]{}",]';

let container = "";
for (let level = 0; level < RUN_DEPTH; level++) {
  // Inside a container a comma is plain; a mismatched closer (`[…}`) is left for JSON.parse to refuse.
  container = `[\\[{](?:[^\\[\\]{}"]|${STRING}${level === 0 ? "" : `|${container}`})*[\\]}]`;
}
const ITEM = `(?:${PLAIN}|${STRING}|${container})+`;

// The last item is followed by `,` or the closer. Why no whitespace in the lookahead: an item
// takes the whitespace after it, and a lookahead reading whitespace again at each step back over
// a long run of spaces would cost the square of its length.
/** Array elements, the last followed by `,` or `]`. */
const ARRAY_RUN = new RegExp(`${ITEM}(?:,${ITEM})*(?=[,\\]])`, "y");
/** Object members, the last followed by `,` or `}`. */
const OBJECT_RUN = new RegExp(`${ITEM}(?:,${ITEM})*(?=[,}])`, "y");

/**
 * Reads the array elements that start at `position` of `piece` into `array`; returns where they
 * end, or -1 when no run of whole elements is there (nothing is read then).
 */
export function readArrayRun(array: unknown[], piece: string, position: number): number {
  ARRAY_RUN.lastIndex = position;
  if (!ARRAY_RUN.test(piece)) return -1;
  const end = ARRAY_RUN.lastIndex;
  const values = parseOrUndefined(`[${piece.slice(position, end)}]`) as unknown[] | undefined;
  // A run of whitespace alone parses as no elements: taken, it would let a comma follow nothing (`[ ,1]`).
  if (values === undefined || values.length === 0) return -1;
  for (let index = 0; index < values.length; index++) array.push(values[index]);
  return end;
}

/** `readArrayRun` for the members of an object. */
export function readObjectRun(object: Record<string, unknown>, piece: string, position: number): number {
  OBJECT_RUN.lastIndex = position;
  if (!OBJECT_RUN.test(piece)) return -1;
  const end = OBJECT_RUN.lastIndex;
  const members = parseOrUndefined(`{${piece.slice(position, end)}}`) as Record<string, unknown> | undefined;
  // As for arrays: whitespace alone is no member (`{ ,"a": 1}`). A run of members has a key at least.
  if (members === undefined || Object.keys(members).length === 0) return -1;
  // In JSON.parse's order, the last of duplicate keys winning: as one parse of the whole text.
  for (const key of Object.keys(members)) setProperty(object, key, members[key]);
  return end;
}

/** `JSON.parse(text)`, or `undefined` for text it refuses (a run the loose search took for whole values). */
function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
