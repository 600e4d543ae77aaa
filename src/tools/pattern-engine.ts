/**
 * True when `pattern` has a repeated group that itself repeats or branches (`^(a+)+$`,
 * `^(\w+\s?)*$`, `(a|ab)*c`): the shapes on which JavaScript's backtracking RegExp can take time
 * exponential in the length of a short string. A repeated group is one followed by `*`, `+` or a
 * `{n,}` / `{n,m}` bound above 1; escapes and character classes are read as single atoms.
 */
export function mayBacktrackExponentially(pattern: string): boolean {
  /** Per open group: whether its body so far repeats or branches. */
  const groups: boolean[] = [];
  let repeatsOrBranches = false;
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === "\\") {
      index += 1;
    } else if (character === "[") {
      index = classEnd(pattern, index);
    } else if (character === "(") {
      groups.push(repeatsOrBranches);
      repeatsOrBranches = false;
    } else if (character === ")") {
      const inner: boolean = repeatsOrBranches;
      repeatsOrBranches = groups.pop() ?? false;
      const repeated = repeatsAt(pattern, index + 1);
      if (repeated && inner) return true;
      repeatsOrBranches ||= inner || repeated;
    } else if (character === "|") {
      repeatsOrBranches = true;
    } else if (repeatsAt(pattern, index)) {
      repeatsOrBranches = true;
    }
  }
  return false;
}

/** Whether the quantifier at `index` (if any) lets the atom before it repeat: `*`, `+`, `{n,}`, `{n,m}` with m above 1. */
function repeatsAt(pattern: string, index: number): boolean {
  const character = pattern[index];
  if (character === "*" || character === "+") return true;
  if (character !== "{") return false;
  const bound = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(index, index + 24));
  if (bound === null) return false;
  if (bound[2] === undefined) return Number(bound[1]) > 1;
  return bound[3] === "" || Number(bound[3]) > 1;
}

/** The index of the `]` closing the class opened at `start` (the last index when it never closes). */
function classEnd(pattern: string, start: number): number {
  let index = start + 1;
  if (pattern[index] === "^") index += 1;
  if (pattern[index] === "]") index += 1;
  for (; index < pattern.length; index++) {
    if (pattern[index] === "\\") index += 1;
    else if (pattern[index] === "]") return index;
  }
  return pattern.length - 1;
}

/**
 * Ajv's engine for the `pattern` keyword: JavaScript's RegExp, except for a pattern that may
 * backtrack exponentially (`mayBacktrackExponentially`), which is not checked (an annotation, as
 * formats are). Why: an MCP server sends its tools' schemas, and with `^(a+)+$` a model's argument
 * of 26 characters held the process 3.9 s, each character more doubling it; the server
 * checks its own arguments in any case.
 */
export const patternEngine = Object.assign(
  (pattern: string, flags: string): { test: (text: string) => boolean } => (mayBacktrackExponentially(pattern) ? { test: () => true } : new RegExp(pattern, flags)),
  { code: "rxagent patternEngine" },
);
