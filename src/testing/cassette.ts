import type { ImageContent, Message, StopReason, TextContent } from "../types/messages.js";
import type { ModelEvent } from "../types/model.js";
import type { MessageChanges } from "./message-changes.js";
import { HIGHEST_JSON_DEPTH, nestsDeeperThan, textNestsDeeperThan, tooDeepText } from "../util/json-depth.js";

/**
 * A recorded model session: what each call asked and what the model streamed back, with times.
 * Plain JSON; the format is documented in docs/cassettes.md.
 *
 * @example
 * const cassette: Cassette = { version: 1, model: { id: "gpt-4o-mini", provider: "openai", api: "openai-completions" }, calls: [] };
 */
export interface Cassette {
  version: 1;
  /** The recorded model's identity; the replaying model takes it over. */
  model: CassetteModelIdentity;
  /**
   * What the recording depended on beyond the model, for whoever replays it: the CLI writes
   * `root` (the folder its file tools read, since the tool descriptions name it) and
   * `rxagent replay` reads it back.
   * @example { root: "/home/me/project" }
   */
  metadata?: Record<string, string>;
  /** One entry per model call, in the order the calls started. */
  calls: CassetteCall[];
}

export interface CassetteModelIdentity {
  id: string;
  provider: string;
  api: string;
}

/** One model call: the request as the model saw it, then every event it streamed. */
export interface CassetteCall {
  request: CassetteRequest;
  /** Without a final `done` or `error` the recording was cut short (a crash, an unsubscribe). */
  events: CassetteEvent[];
}

/**
 * What a call asked: enough to recognise the request, nothing of the model's options (no API
 * key, no headers, no base URL). Messages keep what a provider sends: no timestamps, usage,
 * tool result details or error texts.
 */
export interface CassetteRequest {
  systemPrompt?: string;
  messages: CassetteMessage[];
  /** Tool name, description and JSON schema, in the order the model got them. */
  tools?: { name: string; description: string; parameters: unknown }[];
}

/** A transcript message as a provider would send it. */
export type CassetteMessage =
  | { role: "user"; content: string | (TextContent | ImageContent)[] }
  | { role: "assistant"; content: Extract<Message, { role: "assistant" }>["content"]; stopReason: StopReason }
  | { role: "toolResult"; toolCallId: string; toolName: string; content: (TextContent | ImageContent)[]; isError: boolean };

/** The fields of a model event other than its message (`partial`, `message` or `error`). */
export type EventFields = { type: ModelEvent["type"] } & Record<string, unknown>;

/** One streamed event. */
export interface CassetteEvent {
  /** Milliseconds after the call started, read from the recording scheduler. */
  at: number;
  event: EventFields;
  /**
   * How the event's message differs from the previous event's (the first event's: from an empty
   * object), so a long reply is not stored once per token. Absent: the same message.
   */
  changes?: MessageChanges;
}

/**
 * One line of a cassette written as JSON Lines (`cassetteFileSink`): the header first, then
 * calls and their events as they happen, so a crash keeps everything written so far.
 */
export type CassetteRecord =
  | { kind: "cassette"; version: 1; model: CassetteModelIdentity; metadata?: Record<string, string> }
  | { kind: "call"; call: number; request: CassetteRequest }
  | ({ kind: "event"; call: number } & CassetteEvent);

/** Where a recording goes record by record as it is made, e.g. `cassetteFileSink(path)`. */
export interface CassetteSink {
  /** Contract: store the record before returning; a throw fails the model call being recorded. */
  write(record: CassetteRecord): void;
}

/**
 * Reads a cassette from its text: a JSON document (`JSON.stringify(recorder.cassette)`) or the
 * JSON Lines a sink wrote. A last line cut off by a crash is dropped; anything else malformed
 * throws an error naming the line, as does one nested deeper than a recording ever is.
 */
export function parseCassette(text: string): Cassette {
  const trimmed = text.trim();
  // Checked before parsing: a crafted line nested 6,000 deep parses, then overflows the stack in the replay's structuredClone.
  if (textNestsDeeperThan(trimmed, CASSETTE_DEPTH)) throw new SyntaxError(`Cassette ${depthProblem(trimmed)}`);
  const document = parsedOrUndefined(trimmed) as (Partial<Cassette> & { kind?: string }) | undefined;
  if (document !== undefined && document.kind === undefined) return checkedCassette(document);
  const lines = trimmed.split("\n");
  const records: CassetteRecord[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    try {
      records.push(JSON.parse(line) as CassetteRecord);
    } catch (error) {
      if (index === lines.length - 1) return;
      throw new SyntaxError(`Cassette line ${index + 1} is not JSON: ${(error as Error).message}`);
    }
  });
  return cassetteOfRecords(records);
}

/**
 * How deep a cassette may nest: the deepest arguments a run accepts (`HIGHEST_JSON_DEPTH`, which
 * a recording keeps) inside the levels of the cassette itself, which are fewer than 16.
 */
const CASSETTE_DEPTH = HIGHEST_JSON_DEPTH + 16;

/** Which line of a too-deep cassette nests too deep. */
function depthProblem(text: string): string {
  const lines = text.split("\n");
  const index = lines.findIndex((line) => textNestsDeeperThan(line, CASSETTE_DEPTH));
  return `${index === -1 || lines.length === 1 ? "text" : `line ${index + 1}`} has values that ${tooDeepText(CASSETTE_DEPTH)}; it was not recorded by rxagent.`;
}

/** Folds JSON Lines records into a cassette. */
export function cassetteOfRecords(records: readonly CassetteRecord[]): Cassette {
  const [header, ...rest] = records;
  if (header?.kind !== "cassette") throw new SyntaxError('A cassette starts with a {"kind":"cassette"} record.');
  const cassette: Cassette = { version: header.version, model: header.model, ...(header.metadata === undefined ? {} : { metadata: header.metadata }), calls: [] };
  for (const record of rest) {
    if (record.kind === "call") cassette.calls[record.call] = { request: record.request, events: [] };
    else if (record.kind === "event") {
      const { kind: _kind, call, ...event } = record;
      const target = cassette.calls[call];
      if (!target) throw new SyntaxError(`Cassette event for call ${call}, which has no request record.`);
      target.events.push(event);
    }
  }
  return checkedCassette(cassette);
}

/** The records that write `cassette` as JSON Lines. */
export function recordsOfCassette(cassette: Cassette): CassetteRecord[] {
  return [
    { kind: "cassette", version: cassette.version, model: cassette.model, ...(cassette.metadata === undefined ? {} : { metadata: cassette.metadata }) },
    ...cassette.calls.flatMap((call, index): CassetteRecord[] => [
      { kind: "call", call: index, request: call.request },
      ...call.events.map((event): CassetteRecord => ({ kind: "event", call: index, ...event })),
    ]),
  ];
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const eventTypes = new Set<string>([
  "start", "text_start", "text_delta", "text_end", "thinking_start", "thinking_delta", "thinking_end",
  "toolcall_start", "toolcall_delta", "toolcall_end", "done", "error",
] satisfies ModelEvent["type"][]);

/**
 * The cassette, once its shape is checked: a hand-edited file fails here with the place it went
 * wrong, not later as a replay that misbehaves.
 */
export function checkedCassette(cassette: Partial<Cassette>): Cassette {
  if (cassette.version !== 1) throw new SyntaxError(`Unsupported cassette version ${String(cassette.version)}; this rxagent reads version 1.`);
  const model = cassette.model as Partial<CassetteModelIdentity> | undefined;
  if (typeof model?.id !== "string" || typeof model.provider !== "string" || typeof model.api !== "string") {
    throw new SyntaxError("A cassette needs a model with a string id, provider and api.");
  }
  const metadata: unknown = cassette.metadata;
  if (metadata !== undefined && (metadata === null || typeof metadata !== "object" || Array.isArray(metadata) || Object.values(metadata).some((value) => typeof value !== "string"))) {
    throw new SyntaxError("A cassette's metadata is an object of strings.");
  }
  if (!Array.isArray(cassette.calls)) throw new SyntaxError("A cassette needs a list of calls.");
  // A cassette built in memory is not parsed: checked here before the replay clones its events.
  if (nestsDeeperThan(cassette.calls, CASSETTE_DEPTH)) throw new SyntaxError(`A cassette's calls have values that ${tooDeepText(CASSETTE_DEPTH)}; it was not recorded by rxagent.`);
  for (let callIndex = 0; callIndex < cassette.calls.length; callIndex++) {
    const call = cassette.calls[callIndex] as Partial<CassetteCall> | undefined;
    const where = `Cassette call ${callIndex}`;
    if (call === undefined || call === null) throw new SyntaxError(`${where} is missing.`);
    if (!Array.isArray(call.request?.messages)) throw new SyntaxError(`${where} has no request with a list of messages.`);
    if (!Array.isArray(call.events)) throw new SyntaxError(`${where} has no list of events.`);
    let blocks = 0;
    call.events.forEach((event, eventIndex) => {
      const problem =
        typeof event.at !== "number" || !(event.at >= 0) ? "needs a time `at` of at least 0"
        : !eventTypes.has(String(event.event?.type)) ? `has an unknown event type ${JSON.stringify(event.event?.type)}`
        : event.changes !== undefined && (event.changes === null || typeof event.changes !== "object") ? "has changes that are not an object"
        : problemOfContentLength(event.changes, blocks);
      if (problem) throw new SyntaxError(`${where}, event ${eventIndex}: ${problem}.`);
      blocks = event.changes?.content?.length ?? blocks;
    });
  }
  return cassette as Cassette;
}

/**
 * Why an event's `changes.content.length` cannot be replayed: not a whole number, or more blocks
 * than the message had (`blocks`) plus those the changes bring. Why: the replay builds an array
 * of that length: a crafted length of 10^8, in a line of a few bytes, took 28 s to replay.
 */
function problemOfContentLength(changes: MessageChanges | undefined, blocks: number): string | undefined {
  const content = changes?.content;
  if (content === undefined) return undefined;
  if (typeof content !== "object" || content === null) return "has content changes that are not an object";
  const brought = typeof content.blocks === "object" && content.blocks !== null ? Object.keys(content.blocks).length : 0;
  if (!Number.isInteger(content.length) || content.length < 0 || content.length > blocks + brought) {
    return `has a content length ${JSON.stringify(content.length)} that is not a count of the blocks the message had (${blocks}) and those its changes bring (${brought})`;
  }
  return undefined;
}
