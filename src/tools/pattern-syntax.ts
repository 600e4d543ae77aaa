/**
 * A JSON Schema `pattern` (a JavaScript regular expression) read into a tree that
 * `pattern-automaton.ts` runs in time linear in the text. Only what such an automaton can run is
 * read: a back-reference or a lookaround throws `UnsupportedPattern`. The pattern must already
 * be one `new RegExp` accepts: syntax errors are that constructor's to report.
 */
export type PatternNode =
  | { readonly kind: "atom"; readonly source: string }
  | { readonly kind: "assertion"; readonly assertion: Assertion }
  | { readonly kind: "sequence"; readonly items: readonly PatternNode[] }
  | { readonly kind: "alternation"; readonly options: readonly PatternNode[] }
  | { readonly kind: "repeat"; readonly body: PatternNode; readonly min: number; readonly max: number };

/** A zero-width test: `^`, `$`, `\b`, `\B`. */
export type Assertion = "start" | "end" | "wordBoundary" | "notWordBoundary";

/** Thrown for a pattern that uses what a linear-time automaton cannot run. */
export class UnsupportedPattern extends Error {}

const QUANTIFIER_BOUNDS = /^\{(\d+)(?:(,)(\d*))?\}/;

/**
 * Reads `pattern` as JavaScript does under `unicode` (the `u` flag, which Ajv sets). An atom keeps
 * its source (one character, an escape, a class, `.`) so that the matcher tests a character with
 * JavaScript's own RegExp of that atom alone: classes, property escapes and case folding mean
 * what they mean there.
 */
export function parsePattern(pattern: string, unicode: boolean): PatternNode {
  let index = 0;

  const alternation = (): PatternNode => {
    const options = [sequence()];
    while (pattern[index] === "|") {
      index += 1;
      options.push(sequence());
    }
    return options.length === 1 ? options[0]! : { kind: "alternation", options };
  };

  const sequence = (): PatternNode => {
    const items: PatternNode[] = [];
    while (index < pattern.length && pattern[index] !== "|" && pattern[index] !== ")") items.push(quantified(term()));
    return items.length === 1 ? items[0]! : { kind: "sequence", items };
  };

  const quantified = (node: PatternNode): PatternNode => {
    const character = pattern[index];
    let min: number;
    let max: number;
    if (character === "*" || character === "+" || character === "?") {
      index += 1;
      min = character === "+" ? 1 : 0;
      max = character === "?" ? 1 : Infinity;
    } else if (character === "{" && QUANTIFIER_BOUNDS.test(pattern.slice(index, index + 40))) {
      const bounds = QUANTIFIER_BOUNDS.exec(pattern.slice(index, index + 40))!;
      index += bounds[0].length;
      min = Number(bounds[1]);
      max = bounds[2] === undefined ? min : bounds[3] === "" ? Infinity : Number(bounds[3]);
    } else {
      return node;
    }
    if (pattern[index] === "?") index += 1;
    return { kind: "repeat", body: node, min, max };
  };

  const term = (): PatternNode => {
    const start = index;
    const character = pattern[index]!;
    if (character === "(") return group();
    if (character === "^" || character === "$") {
      index += 1;
      return { kind: "assertion", assertion: character === "^" ? "start" : "end" };
    }
    if (character === "[") {
      index = classEnd(pattern, index) + 1;
      return { kind: "atom", source: pattern.slice(start, index) };
    }
    if (character === "\\") return escape();
    const codePoint = unicode ? pattern.codePointAt(index)! : pattern.charCodeAt(index);
    index += codePoint > 0xffff ? 2 : 1;
    return { kind: "atom", source: pattern.slice(start, index) };
  };

  const group = (): PatternNode => {
    index += 1;
    if (pattern[index] === "?") {
      const kind = pattern.slice(index, index + 3);
      if (kind.startsWith("?:")) index += 2;
      else if (kind === "?<=" || kind === "?<!" || kind.startsWith("?=") || kind.startsWith("?!")) throw new UnsupportedPattern("a lookaround");
      else if (kind.startsWith("?<")) index = pattern.indexOf(">", index) + 1;
      else throw new UnsupportedPattern("a group modifier");
    }
    const inner = alternation();
    index += 1;
    return inner;
  };

  const escape = (): PatternNode => {
    const start = index;
    const letter = pattern[index + 1]!;
    index += 2;
    if (letter === "b" || letter === "B") return { kind: "assertion", assertion: letter === "b" ? "wordBoundary" : "notWordBoundary" };
    if ((letter >= "1" && letter <= "9") || letter === "k") throw new UnsupportedPattern("a back-reference");
    if (letter === "x" && /^[\dA-Fa-f]{2}$/.test(pattern.slice(index, index + 2))) index += 2;
    else if (letter === "c" && /^[A-Za-z]$/.test(pattern[index] ?? "")) index += 1;
    else if ((letter === "p" || letter === "P") && unicode) index = pattern.indexOf("}", index) + 1;
    else if (letter === "u") index = unicodeEscapeEnd(pattern, index, unicode);
    return { kind: "atom", source: pattern.slice(start, index) };
  };

  const tree = alternation();
  if (index < pattern.length) throw new UnsupportedPattern(`an unexpected "${pattern[index]}"`);
  return tree;
}

/**
 * The index after a `\u` escape whose `u` ends before `index`: `\u{…}` under `unicode`, else four
 * hex digits, and under `unicode` a lead surrogate's escape takes its trail surrogate's with it
 * (the pair is one character there).
 */
function unicodeEscapeEnd(pattern: string, index: number, unicode: boolean): number {
  if (unicode && pattern[index] === "{") return pattern.indexOf("}", index) + 1;
  if (!/^[\dA-Fa-f]{4}$/.test(pattern.slice(index, index + 4))) return index;
  const unit = Number.parseInt(pattern.slice(index, index + 4), 16);
  const trail = Number.parseInt(pattern.slice(index + 6, index + 10), 16);
  const pairs = unicode && unit >= 0xd800 && unit <= 0xdbff && pattern.slice(index + 4, index + 6) === "\\u" && trail >= 0xdc00 && trail <= 0xdfff;
  return index + (pairs ? 10 : 4);
}

/** The index of the `]` that closes the class opened at `start` (`[]` is the empty class, `[^]` any character). */
function classEnd(pattern: string, start: number): number {
  let index = start + 1;
  if (pattern[index] === "^") index += 1;
  for (; index < pattern.length; index++) {
    if (pattern[index] === "\\") index += 1;
    else if (pattern[index] === "]") return index;
  }
  throw new UnsupportedPattern("an unclosed class");
}
