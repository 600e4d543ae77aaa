import { calculatorNames } from "./calculator.js";

/** A tool call the demo model wants to make, before it has an id. */
export interface PlannedToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** What a user's text asks for, in the order it asks. */
export interface Intents {
  /** Tool calls, in the order their requests appear in the text. */
  toolCalls: PlannedToolCall[];
  /** Why each call was chosen, one line each (the model's visible thinking). */
  reasons: string[];
  greeting: boolean;
  help: boolean;
  /** "stop", "never mind"...: the user wants the agent to stop. */
  stop: boolean;
}

// Words people use for operators, rewritten before expressions are looked for.
const wordOperators: [RegExp, string][] = [
  [/\bsquare root of\s+([\d.]+)/gi, "sqrt($1)"],
  [/\bcube root of\s+([\d.]+)/gi, "cbrt($1)"],
  [/\b([\d.]+)\s+squared\b/gi, "$1^2"],
  [/\b([\d.]+)\s+cubed\b/gi, "$1^3"],
  [/\bto the power of\b/gi, "^"],
  [/\bmultiplied by\b|\btimes\b/gi, "*"],
  [/\bdivided by\b|\bover\b/gi, "/"],
  [/\bplus\b/gi, "+"],
  [/\bminus\b/gi, "-"],
  [/\bmod(?:ulo)?\b/gi, "%"],
  [/(\d)\s*[x×]\s*(?=\d)/gi, "$1*"],
];

const name = `\\b(?:${calculatorNames.join("|")})\\b`;
const atom = `(?:\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?|\\.\\d+|${name}|\\*\\*|[-+*/%^(),÷])`;
const expressionSpan = new RegExp(`${atom}(?:\\s*${atom})*`, "gi");
const calculateVerb = /\b(?:calculate|compute|evaluate|calc)\b\s*:?\s*(.*)$/i;
const timeRequest = /\b(?:time|clock|date|today|what day)\b/i;
const listRequest = /\b(?:ls|list|files|folders?|director(?:y|ies)|dir)\b/i;
const listTarget = /\b(?:in|of|inside|under)\s+(?:the\s+)?(?:folder\s+|directory\s+)?["'`]?([\w./~-]+)["'`]?/i;
const readVerb = /\b(?:read|open|show|cat|print|display|contents?|inside|says?|look at|what'?s in)\b/i;
const pathToken = /(?:^|[\s"'`(])((?:~|\.{1,2})?\/?[\w.-]+(?:\/[\w.-]+)+\/?|[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?=$|[\s"'`),?!:;])/g;
// `write "some text" to notes.txt`: quoted text, then the new file's name.
const writeRequest = /\b(?:write|save|put)\s+(["“'])(.+?)["”']\s+(?:to|in|into|as)\s+(?:a\s+)?(?:new\s+)?(?:file\s+)?["'`]?([\w./-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,7})\b/i;
// "research what README.md says": the rest of the text is the researcher's task.
const researchRequest = /\b(?:research(?:er)?|investigate|look into)\b\s*:?\s*(.*)$/i;
const notFolders = new Set(["this", "the", "here", "current", "folder", "directory", "it", "there", "cwd"]);

/**
 * Reads what a user's text asks for: arithmetic (calculator), the time (clock), a folder
 * listing, a file to read, a new file to write; and whether it greets, asks for help or says stop.
 *
 * @example detectIntents("what is 12*7 and what time is it").toolCalls
 * // [{ name: "calculator", arguments: { expression: "12*7" } }, { name: "clock", arguments: {} }]
 */
export function detectIntents(request: string): Intents {
  const research = researchRequest.exec(request);
  const task = research?.[1]?.replace(/[?.!]+$/, "").trim();
  // The researcher does the task's reading itself: the rest of the text asks for nothing more here.
  if (research && task) {
    const call = { name: "researcher", arguments: { task } };
    return { ...moods(request), toolCalls: [call], reasons: [`"${research[0].split(/\s/)[0]}" hands "${task}" to the researcher, a sub-agent with its own model and the file tools → researcher.`] };
  }
  const found: { position: number; call: PlannedToolCall; reason: string }[] = [];
  const write = writeRequest.exec(request);
  // The text to write is not a request of its own: "write "2+2" to a.txt" computes nothing.
  const text = write ? request.replace(write[0], " ".repeat(write[0].length)) : request;
  if (write) {
    const [, , content, path] = write;
    found.push({ position: write.index, call: { name: "write_file", arguments: { path, content } }, reason: `"${path}" is a new file to write → write_file (it asks you first).` });
  }
  const files = readRequests(text);
  for (const file of files) {
    found.push({ position: file.position, call: { name: "read_file", arguments: { path: file.path } }, reason: `"${file.path}" is a file to read → read_file.` });
  }
  for (const expression of expressions(text, files.map((file) => file.path))) {
    found.push({ position: expression.position, call: { name: "calculator", arguments: { expression: expression.text } }, reason: `"${expression.text}" is arithmetic → calculator.` });
  }
  const time = timeRequest.exec(text);
  if (time) found.push({ position: time.index, call: { name: "clock", arguments: {} }, reason: `"${time[0]}" asks for the time → clock.` });
  const list = listRequest.exec(text);
  if (list && files.length === 0) {
    const target = listTarget.exec(text.slice(list.index))?.[1];
    const folder = target !== undefined && !notFolders.has(target.toLowerCase()) ? target : ".";
    found.push({ position: list.index, call: { name: "list_files", arguments: { path: folder } }, reason: `"${list[0]}" asks for a listing of ${folder} → list_files.` });
  }
  found.sort((left, right) => left.position - right.position);
  return { toolCalls: found.map((entry) => entry.call), reasons: found.map((entry) => entry.reason), ...moods(text) };
}

function moods(text: string): Pick<Intents, "greeting" | "help" | "stop"> {
  return {
    greeting: /^\s*(?:hi|hello|hey|yo|hiya|good (?:morning|afternoon|evening))\b/i.test(text),
    help: /\b(?:help|what can you do|who are you|what are you)\b/i.test(text),
    stop: /\b(?:stop|cancel|never ?mind|forget (?:it|that)|abort|that'?s enough)\b/i.test(text),
  };
}

function expressions(text: string, paths: string[]): { text: string; position: number }[] {
  let normalized = text;
  for (const path of paths) normalized = normalized.replace(path, " ".repeat(path.length));
  for (const [pattern, replacement] of wordOperators) normalized = normalized.replace(pattern, replacement);
  const spans: { text: string; position: number }[] = [];
  for (const match of normalized.matchAll(expressionSpan)) {
    const span = trimSpan(match[0]);
    const operand = /\d|\b(?:pi|e|tau)\b/i;
    const operation = /\d\s*[-+*/%^÷]|[-+*/%^÷]\s*[\d(]|[a-z]\s*\(|\)\s*[-+*/%^]/i;
    if (operand.test(span) && operation.test(span)) spans.push({ text: span, position: match.index });
  }
  if (spans.length === 0) {
    // "calculate <anything>": let the calculator judge it, so a person sees how it refuses.
    const verb = calculateVerb.exec(text);
    const rest = verb?.[1]?.replace(/[?.!]+$/, "").trim();
    if (verb && rest) spans.push({ text: rest, position: verb.index });
  }
  return spans;
}

function trimSpan(span: string): string {
  let trimmed = span.trim().replace(/^[)*/%^,]+|[-+*/%^(,]+$/g, "").trim();
  // Unbalanced brackets at the edges come from prose like "(that is 2+3)".
  const open = (trimmed.match(/\(/g) ?? []).length;
  const close = (trimmed.match(/\)/g) ?? []).length;
  if (close > open && trimmed.endsWith(")")) trimmed = trimmed.slice(0, -1).trim();
  if (open > close && trimmed.startsWith("(")) trimmed = trimmed.slice(1).trim();
  return trimmed;
}

function readRequests(text: string): { path: string; position: number }[] {
  if (!readVerb.test(text)) return [];
  const requests: { path: string; position: number }[] = [];
  for (const match of text.matchAll(pathToken)) {
    const path = match[1];
    if (path === undefined || path.endsWith("/")) continue;
    requests.push({ path, position: match.index });
  }
  return requests;
}
