import { PatternAutomaton, PatternTooLarge } from "./pattern-automaton.js";
import { UnsupportedPattern } from "./pattern-syntax.js";

/**
 * Ajv's engine for the `pattern` and `patternProperties` keywords: a pattern runs as an automaton
 * (`PatternAutomaton`) in time linear in the text, not as JavaScript's backtracking RegExp. Why:
 * an MCP server sends its tools' schemas and a model writes the arguments checked against them;
 * with RegExp, `^(a+)+$` held the process 3.9 s on 26 characters (each one more doubles it) and
 * `^\d*\d*\d*$` 27 s on 4,000. A pattern the automaton cannot run (a back-reference, a lookaround,
 * more than `MAX_PATTERN_STATES` states) is not checked: an annotation, as formats are (the server
 * checks its own arguments in any case). A syntax error still throws, as RegExp reports it.
 */
export const patternEngine = Object.assign(
  (pattern: string, flags: string): { test: (text: string) => boolean; toString: () => string } => {
    // Ajv keeps one engine per distinct `toString()`: RegExp's own text, which also throws here
    // on a syntax error.
    const text = String(new RegExp(pattern, flags));
    try {
      const automaton = new PatternAutomaton(pattern, flags);
      return { test: (candidate) => automaton.test(candidate), toString: () => text };
    } catch (error) {
      if (error instanceof UnsupportedPattern || error instanceof PatternTooLarge) return { test: () => true, toString: () => text };
      throw error;
    }
  },
  { code: "rxagent patternEngine" },
);
