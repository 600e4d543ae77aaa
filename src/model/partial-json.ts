import { MAX_JSON_DEPTH, textNestsDeeperThan } from "../util/json-depth.js";

/**
 * Parses JSON that may be cut off anywhere, returning the best guess of the value so far.
 *
 * Streaming tool-call arguments arrive as fragments (`{"ci`, `ty": "Par`, ...); a UI wants to
 * show the fields that are already known. An unfinished string keeps the characters received,
 * an unfinished key or literal is dropped, open arrays and objects are closed.
 *
 * Contract: never throws; returns `undefined` when nothing usable has arrived yet.
 * @example parsePartialJson('{"city": "Par') // { city: "Par" }
 */
export function parsePartialJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;

  // Only a text that ends a container can be complete JSON worth a first try: streamed
  // arguments are parsed on every fragment, and a parse that throws costs the most. A complete
  // string, number or literal comes out of the repair below unchanged.
  const last = trimmed.charCodeAt(trimmed.length - 1);
  if (last === 0x7d || last === 0x5d) {
    // Checked before this parse only: V8's parser is iterative and would hand on a value every
    // later step overflows on. The repair below checks the depth as it walks.
    if (textNestsDeeperThan(trimmed)) return undefined;
    try {
      return JSON.parse(trimmed);
    } catch {
      // Fall through: the text is incomplete, close it and try again.
    }
  }
  const repaired = closeIncompleteJson(trimmed);
  if (repaired === undefined) return undefined;
  try {
    return JSON.parse(repaired);
  } catch {
    return undefined;
  }
}

/**
 * The best-effort object form of streamed tool-call arguments: `{}` until an object is known.
 *
 * Contract: always returns a fresh plain object, never throws.
 */
export function parseToolArguments(text: string): Record<string, unknown> {
  const value = parsePartialJson(text);
  return isPlainObject(value) ? value : {};
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One open container, linked to the one around it. Why a linked list and not an array: the
 * walk remembers the open containers at every safe cut, and a shared, never-changed chain makes
 * that a pointer copy; copying an array there cost length × depth (48 KB of `[[[…` then `1,1,…`
 * took 12 s, issue 27). `expectKey` is the one field that changes: whether the next string in
 * an object is a key, which only the innermost container's walk reads.
 */
interface OpenContainer {
  readonly kind: "object" | "array";
  readonly outer: OpenContainer | undefined;
  readonly depth: number;
}

/**
 * Walks the text once, remembering the open containers and the last position where cutting
 * would leave valid JSON, then appends the closers. Returns `undefined` for text that nests
 * deeper than `MAX_JSON_DEPTH` (see util/json-depth.ts). Why the default and not the run's
 * `maxJsonDepth`: a provider parses before any run config reaches it, and a partial is only a
 * guess; under a higher limit the deeper partials stay `{}` while streaming and the complete
 * arguments (JSON.parse of the whole text) are checked against the run's limit.
 */
function closeIncompleteJson(text: string): string | undefined {
  let open: OpenContainer | undefined;
  // Text up to `safeEnd` is a prefix we can close without leaving a dangling key or comma.
  let safeEnd = 0;
  let safeOpen: OpenContainer | undefined;
  let inString = false;
  let stringStart = 0;
  let escaped = false;
  // Inside an object, whether the next string is a key: one entry per open container.
  const expectKey: boolean[] = [];

  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (escaped) escaped = false;
      else if (char === "\\") escaped = true;
      else if (char === '"') {
        inString = false;
        const isKey = open?.kind === "object" && expectKey[expectKey.length - 1] === true;
        if (!isKey) {
          safeEnd = index + 1;
          safeOpen = open;
        }
      }
      continue;
    }
    switch (char) {
      case '"':
        inString = true;
        stringStart = index;
        break;
      case "{":
      case "[": {
        const depth = (open?.depth ?? 0) + 1;
        if (depth > MAX_JSON_DEPTH) return undefined;
        open = { kind: char === "{" ? "object" : "array", outer: open, depth };
        expectKey.push(char === "{");
        safeEnd = index + 1;
        safeOpen = open;
        break;
      }
      case "}":
      case "]":
        open = open?.outer;
        expectKey.pop();
        safeEnd = index + 1;
        safeOpen = open;
        break;
      case ":":
        expectKey[expectKey.length - 1] = false;
        break;
      case ",":
        if (open?.kind === "object") expectKey[expectKey.length - 1] = true;
        break;
      default:
        // A complete number or literal followed by more text is safe up to its end.
        if (isLiteralChar(text.charCodeAt(index)) && !isLiteralChar(text.charCodeAt(index + 1))) {
          if (index + 1 < text.length || isCompleteLiteral(text, index)) {
            safeEnd = index + 1;
            safeOpen = open;
          }
        }
    }
  }

  let prefix = text.slice(0, safeEnd);
  let closing = safeOpen;
  if (inString) {
    const isKey = open?.kind === "object" && expectKey[expectKey.length - 1] === true;
    if (!isKey) {
      // Keep the partial string value, dropping a dangling backslash or a cut \u escape.
      const received = text.slice(stringStart);
      const partial = escaped ? received.slice(0, -1) : received.replace(/\\u[0-9a-fA-F]{0,3}$/, "");
      prefix = text.slice(0, stringStart) + partial + '"';
      closing = open;
    }
  }
  if (prefix === "") return undefined;
  let closers = "";
  for (let container = closing; container !== undefined; container = container.outer) closers += container.kind === "object" ? "}" : "]";
  return prefix + closers;
}

/** A literal at the very end of the text counts only when it is complete (`true`, `12`). */
function isCompleteLiteral(text: string, lastIndex: number): boolean {
  // Only the run of literal characters that ends here can hold the match: test that, not the text.
  let start = lastIndex;
  while (start > 0 && isLiteralChar(text.charCodeAt(start - 1))) start--;
  const match = /(true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)$/.exec(text.slice(start, lastIndex + 1));
  // A number at the very end may still grow (`12` -> `123`), but its value so far is useful.
  return match !== null;
}

/** `[0-9a-zA-Z.+-]`: what numbers and literals are made of (false for NaN, past the end). */
function isLiteralChar(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    code === 0x2e ||
    code === 0x2b ||
    code === 0x2d
  );
}
