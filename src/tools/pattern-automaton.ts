import { type Assertion, type PatternNode, parsePattern, UnsupportedPattern } from "./pattern-syntax.js";

/** Thrown when a pattern's automaton would pass `MAX_PATTERN_STATES` (counted repetition is copied). */
export class PatternTooLarge extends Error {}

/**
 * States a pattern may compile to. The time to test a text is at most its length times this
 * (each character steps every live state once): `[a-z]{1,64}@[a-z.]{1,255}` is about 640 states.
 */
export const MAX_PATTERN_STATES = 2_000;

/**
 * Steps one test may take, a step being a state visited (a live state reading a character, or a
 * branch or assertion passed on the way to one): 0.2 to 0.3 s on this project's 2-core machine at
 * a load average of 6.
 */
export const MAX_PATTERN_STEPS = 5_000_000;

const ATOM = 0;
const SPLIT = 1;
const ASSERT = 2;
const MATCH = 3;

/** How many characters past ASCII each class remembers: an argument of many distinct ones must not grow memory without end. */
const REMEMBERED_CHARACTERS = 1_024;

/**
 * One character class of the pattern, tested by JavaScript's RegExp of it alone (each ASCII
 * character once). The caches are made at the first test: a pattern's many atoms cost little
 * until a text reaches them.
 */
class CharacterTest {
  private readonly regExp: RegExp;
  private ascii: Int8Array | undefined;
  private others: Map<number, boolean> | undefined;

  constructor(source: string, flags: string) {
    this.regExp = new RegExp(`^(?:${source})$`, flags);
  }

  /** Whether the character `codePoint`, `text` from `start` to `end`, is in the class. */
  test(codePoint: number, text: string, start: number, end: number): boolean {
    if (codePoint < 128) {
      this.ascii ??= new Int8Array(128);
      const known = this.ascii[codePoint]!;
      if (known !== 0) return known > 0;
      const matches = this.regExp.test(text.slice(start, end));
      this.ascii[codePoint] = matches ? 1 : -1;
      return matches;
    }
    this.others ??= new Map();
    let matches = this.others.get(codePoint);
    if (matches === undefined) {
      matches = this.regExp.test(text.slice(start, end));
      if (this.others.size < REMEMBERED_CHARACTERS) this.others.set(codePoint, matches);
    }
    return matches;
  }
}

/**
 * A pattern as a Thompson automaton: `test(text)` says whether the pattern matches somewhere in
 * `text`, as `RegExp.prototype.test` does, in time linear in the text's length (no backtracking:
 * every live state steps once per character). Throws `UnsupportedPattern` (a back-reference, a
 * lookaround) or `PatternTooLarge`.
 */
export class PatternAutomaton {
  private readonly kinds: number[] = [];
  /** ATOM: the next state; SPLIT: the first branch; ASSERT: the next state. */
  private readonly next: number[] = [];
  /** ATOM: the index of its test; SPLIT: the second branch; ASSERT: the index of its assertion. */
  private readonly detail: number[] = [];
  private readonly tests: CharacterTest[] = [];
  /** Each atom's source to its test's index: the copies of a counted repetition share one. */
  private readonly testIndexes = new Map<string, number>();
  private readonly start: number;
  /** Whether a match can only begin at the text's start (`^…`, not multiline): the search ends once no state is live. */
  private readonly anchored: boolean;
  private readonly unicode: boolean;
  private readonly multiline: boolean;
  private readonly wordCharacter: CharacterTest;
  /** Per state, the step at which it was last added: a state is added once per step. */
  private readonly marks: Int32Array;
  private step = 0;
  /** The states live before and after a character, and the states still to enter (`enter`): made once, reused by every test. */
  private readonly live: Int32Array;
  private readonly following: Int32Array;
  private readonly pending: Int32Array;
  /** Steps the current test may still take (`MAX_PATTERN_STEPS`). */
  private budget = 0;

  constructor(pattern: string, flags: string) {
    if (flags.includes("v")) throw new UnsupportedPattern("the v flag");
    this.unicode = flags.includes("u");
    this.multiline = flags.includes("m");
    const characterFlags = flags.replace(/[gmyd]/g, "");
    const tree = parsePattern(pattern, this.unicode);
    const match = this.add(MATCH, -1, -1);
    this.start = this.compile(tree, match, characterFlags);
    this.anchored = !this.multiline && startsAtStart(tree);
    this.wordCharacter = new CharacterTest("\\w", characterFlags);
    this.marks = new Int32Array(this.kinds.length);
    this.live = new Int32Array(this.kinds.length);
    this.following = new Int32Array(this.kinds.length);
    this.pending = new Int32Array(2 * this.kinds.length + 1);
  }

  /**
   * Whether the pattern matches somewhere in `text`. False, too, once the search has taken
   * `MAX_PATTERN_STEPS` steps: the argument is refused rather than the process held (it takes a
   * text of 100,000 characters with 50 states visited at each). Why branches and assertions count:
   * `(?:\b|\B){600}x` visits 1,800 of them at every character with no state live, 2.9 s on
   * 100,000 characters when only live states counted.
   */
  test(text: string): boolean {
    // The marks are 32-bit: start them over long before a step number could wrap.
    if (this.step > 0x3fffffff - text.length) {
      this.marks.fill(0);
      this.step = 0;
    }
    let live = this.live;
    let next = this.following;
    this.step += 1;
    this.budget = MAX_PATTERN_STEPS;
    let liveCount = this.enter(live, 0, this.start, text, 0);
    if (liveCount < 0) return true;
    for (let position = 0; position < text.length; ) {
      const codePoint = this.unicode ? text.codePointAt(position)! : text.charCodeAt(position);
      const start = position;
      position += codePoint > 0xffff ? 2 : 1;
      this.step += 1;
      this.budget -= liveCount;
      if (this.budget < 0) return false;
      let nextCount = 0;
      for (let index = 0; index < liveCount; index++) {
        const state = live[index]!;
        if (!this.tests[this.detail[state]!]!.test(codePoint, text, start, position)) continue;
        nextCount = this.enter(next, nextCount, this.next[state]!, text, position);
        if (nextCount < 0) return true;
      }
      if (!this.anchored) {
        nextCount = this.enter(next, nextCount, this.start, text, position);
        if (nextCount < 0) return true;
      } else if (nextCount === 0) {
        return false;
      }
      if (this.budget < 0) return false;
      [live, next] = [next, live];
      liveCount = nextCount;
    }
    return false;
  }

  /**
   * Adds `state` and every state it reaches without reading a character (branches, assertions
   * that hold at `position`) to `live` from `count` on, keeping only the states that read one.
   * Returns the new count, or -1 when the final state is reached: the pattern matched.
   */
  private enter(live: Int32Array, count: number, state: number, text: string, position: number): number {
    // A state pushes at most two others, and only the first time it is popped in a step.
    const pending = this.pending;
    let pendingCount = 0;
    pending[pendingCount++] = state;
    while (pendingCount > 0) {
      const current = pending[--pendingCount]!;
      if (this.marks[current] === this.step) continue;
      this.marks[current] = this.step;
      this.budget -= 1;
      const kind = this.kinds[current];
      if (kind === MATCH) return -1;
      if (kind === ATOM) {
        live[count++] = current;
      } else if (kind === SPLIT) {
        pending[pendingCount++] = this.detail[current]!;
        pending[pendingCount++] = this.next[current]!;
      } else if (this.holds(ASSERTIONS[this.detail[current]!]!, text, position)) {
        pending[pendingCount++] = this.next[current]!;
      }
    }
    return count;
  }

  private holds(assertion: Assertion, text: string, position: number): boolean {
    if (assertion === "start") return position === 0 || (this.multiline && isLineTerminator(text.charCodeAt(position - 1)));
    if (assertion === "end") return position === text.length || (this.multiline && isLineTerminator(text.charCodeAt(position)));
    const boundary = this.isWordAt(text, position - 1) !== this.isWordAt(text, position);
    return assertion === "wordBoundary" ? boundary : !boundary;
  }

  private isWordAt(text: string, position: number): boolean {
    if (position < 0 || position >= text.length) return false;
    // `\w` never matches a character outside the BMP, even under `u`, so a code unit is enough.
    return this.wordCharacter.test(text.charCodeAt(position), text, position, position + 1);
  }

  /** Compiles `node` to states that continue at `next`; returns its first state. */
  private compile(node: PatternNode, next: number, flags: string): number {
    switch (node.kind) {
      case "atom": {
        let test = this.testIndexes.get(node.source);
        if (test === undefined) {
          test = this.tests.push(new CharacterTest(node.source, flags)) - 1;
          this.testIndexes.set(node.source, test);
        }
        return this.add(ATOM, next, test);
      }
      case "assertion":
        return this.add(ASSERT, next, ASSERTIONS.indexOf(node.assertion));
      case "sequence":
        return node.items.reduceRight((following, item) => this.compile(item, following, flags), next);
      case "alternation":
        return node.options
          .slice(0, -1)
          .reduceRight((otherwise, option) => this.add(SPLIT, this.compile(option, next, flags), otherwise), this.compile(node.options.at(-1)!, next, flags));
      case "repeat":
        return this.repeat(node.body, node.min, node.max, next, flags);
    }
  }

  /** `body` at least `min` and at most `max` times, then `next`: the optional copies nest, `(x(x)?)?`; an unbounded tail loops. */
  private repeat(body: PatternNode, min: number, max: number, next: number, flags: string): number {
    let tail: number;
    if (max === Infinity) {
      tail = this.add(SPLIT, -1, next);
      this.next[tail] = this.compile(body, tail, flags);
    } else {
      tail = next;
      for (let copy = min; copy < max; copy++) tail = this.add(SPLIT, this.compile(body, tail, flags), next);
    }
    for (let copy = 0; copy < min; copy++) tail = this.compile(body, tail, flags);
    return tail;
  }

  private add(kind: number, next: number, detail: number): number {
    if (this.kinds.length >= MAX_PATTERN_STATES) throw new PatternTooLarge(`more than ${MAX_PATTERN_STATES} states`);
    this.kinds.push(kind);
    this.next.push(next);
    this.detail.push(detail);
    return this.kinds.length - 1;
  }
}

const ASSERTIONS: readonly Assertion[] = ["start", "end", "wordBoundary", "notWordBoundary"];

/** Whether every match of `node` must begin with `^`. */
function startsAtStart(node: PatternNode): boolean {
  switch (node.kind) {
    case "assertion":
      return node.assertion === "start";
    case "sequence":
      return node.items.length > 0 && startsAtStart(node.items[0]!);
    case "alternation":
      return node.options.every(startsAtStart);
    case "repeat":
      return node.min > 0 && startsAtStart(node.body);
    case "atom":
      return false;
  }
}

function isLineTerminator(unit: number): boolean {
  return unit === 0x0a || unit === 0x0d || unit === 0x2028 || unit === 0x2029;
}
