// Parses JSON cut off anywhere, as the library's parsePartialJson does (src/model/partial-json.ts;
// test/server/web-page-decoder.test.ts checks the two agree on every prefix of random JSON). The
// page needs it for protocol 3, whose `j` operation sends a tool call's arguments as the text
// streamed so far rather than re-parsed. Unlike the library's parser it reads the whole text on
// each call: the server sends `j` after every fragment up to 4 KiB, then each time the text has
// doubled, so a page parses at most about three times the text in all.

/** How deep JSON may nest before it counts as unusable, as the library's MAX_JSON_DEPTH. */
const MAX_JSON_DEPTH = 128;
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const LITERAL_CHAR = /[0-9a-zA-Z.+-]/;
const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const NOT_A_LITERAL = Symbol("not a literal");

function literalValue(text) {
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "null") return null;
  return JSON_NUMBER.test(text) ? Number(text) : NOT_A_LITERAL;
}

/** Sets an own property as JSON.parse does: `__proto__` becomes a plain key, not the prototype. */
function setProperty(object, key, value) {
  if (key === "__proto__") Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

/**
 * The best guess of the value `text` starts: an unfinished string keeps the characters received,
 * an unfinished key or literal is dropped, open arrays and objects are closed. Text that nests
 * deeper than 128 or stops being JSON gives undefined, as does text with no value yet.
 */
export function parsePartialJson(text) {
  // What is expected next: "value", "valueOrClose" (after `[`), "keyOrClose" (after `{`), "key",
  // "colon", "after" (a value ended), "string", "escape", "unicode", "literal".
  let state = "value";
  const open = [];
  let root;
  let string = "";
  let stringIsKey = false;
  let unicode = "";
  let literal = "";

  const completeValue = (value) => {
    state = "after";
    const container = open[open.length - 1];
    if (container === undefined) root = value;
    else if (container.array) container.array.push(value);
    else setProperty(container.object, container.key, value);
  };

  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (state === "string") {
      if (char === '"') {
        if (!stringIsKey) completeValue(string);
        else {
          open[open.length - 1].key = string;
          state = "colon";
        }
      } else if (char === "\\") state = "escape";
      else if (char < " ") return undefined;
      else string += char;
      continue;
    }
    if (state === "escape") {
      if (ESCAPES[char] !== undefined) {
        string += ESCAPES[char];
        state = "string";
      } else if (char === "u") {
        unicode = "";
        state = "unicode";
      } else return undefined;
      continue;
    }
    if (state === "unicode") {
      if (!/[0-9a-fA-F]/.test(char)) return undefined;
      unicode += char;
      if (unicode.length === 4) {
        string += String.fromCharCode(parseInt(unicode, 16));
        state = "string";
      }
      continue;
    }
    if (state === "literal") {
      if (LITERAL_CHAR.test(char)) {
        literal += char;
        continue;
      }
      // Judged once it ends: until then `1.` or `tr` may still become valid.
      const value = literalValue(literal);
      if (value === NOT_A_LITERAL) return undefined;
      completeValue(value);
    }
    if (char === " " || char === "\n" || char === "\r" || char === "\t") continue;
    const expectsValue = state === "value" || state === "valueOrClose";
    const container = open[open.length - 1];
    if (expectsValue && LITERAL_CHAR.test(char)) {
      literal = char;
      state = "literal";
    } else if (char === '"' && (expectsValue || state === "keyOrClose" || state === "key")) {
      stringIsKey = !expectsValue;
      string = "";
      state = "string";
    } else if ((char === "{" || char === "[") && expectsValue) {
      if (open.length >= MAX_JSON_DEPTH) return undefined;
      open.push(char === "[" ? { array: [] } : { object: {}, key: "" });
      state = char === "[" ? "valueOrClose" : "keyOrClose";
    } else if (char === "]" && (state === "valueOrClose" || state === "after") && container?.array) {
      open.pop();
      completeValue(container.array);
    } else if (char === "}" && (state === "keyOrClose" || state === "after") && container?.object) {
      open.pop();
      completeValue(container.object);
    } else if (char === ":" && state === "colon") state = "value";
    else if (char === "," && state === "after" && container !== undefined) state = container.array ? "value" : "key";
    else return undefined;
  }

  let inner;
  let hasInner = false;
  if ((state === "string" || state === "escape" || state === "unicode") && !stringIsKey) {
    // A cut escape (`\`, `\u00`) is left out until it is whole.
    inner = string;
    hasInner = true;
  } else if (state === "literal") {
    // A number at the very end may still grow (`12` -> `123`), but its value so far is useful.
    const value = literalValue(literal);
    if (value !== NOT_A_LITERAL) {
      inner = value;
      hasInner = true;
    }
  }
  if (open.length === 0) return hasInner ? inner : root;
  for (let depth = open.length - 1; depth >= 0; depth--) {
    const container = open[depth];
    if (container.array) {
      const copy = container.array.slice();
      if (hasInner) copy.push(inner);
      inner = copy;
    } else {
      const copy = { ...container.object };
      if (hasInner) setProperty(copy, container.key, inner);
      inner = copy;
    }
    hasInner = true;
  }
  return inner;
}

/** Streamed tool-call arguments as an object: `{}` until an object is known, as the library's parseToolArguments. */
export function parseToolArguments(text) {
  const value = parsePartialJson(text);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}
