import { asyncScheduler, defer, type SchedulerLike, tap } from "rxjs";
import type { AssistantMessage } from "../types/messages.js";
import type { Model, ModelEvent } from "../types/model.js";
import type { Cassette, CassetteEvent, CassetteRecord, CassetteSink, EventFields } from "./cassette.js";
import { cassetteRequestOf, redactCredentials } from "./cassette-request.js";
import { messageChanges } from "./message-changes.js";
import { wholeBoundedModelEvent } from "../model/bounded-tool-calls.js";
import { HIGHEST_JSON_DEPTH } from "../util/json-depth.js";


export interface RecordingModelOptions {
  /**
   * Where event times come from: each event is recorded at `scheduler.now()` minus the time the
   * call started. Default `asyncScheduler` (wall-clock milliseconds).
   *
   * Contract: the scheduler the recorded model runs on, so the times are the model's own.
   */
  scheduler?: SchedulerLike;
  /**
   * Gets every record as it is made, e.g. `cassetteFileSink(path)` from `rxagent/testing/node`,
   * so a crash keeps what was recorded.
   *
   * Contract: the header record is written at once, each event before it goes on to the agent;
   * a throw from `write` fails the call being recorded (an error message), not the run.
   */
  sink?: CassetteSink;
  /**
   * Exact strings to blank out wherever they occur, e.g. the API key the model was given.
   * Credential-like strings (`sk-…`, `Bearer …`, Google keys) are blanked regardless.
   *
   * Contract: strings of 4 characters or more; shorter ones are ignored.
   * @example secrets: [process.env.OPENAI_API_KEY ?? ""]
   */
  secrets?: readonly string[];
  /**
   * Written into the cassette's header (`Cassette.metadata`): what a replay needs besides the
   * model, e.g. the folder the tools read.
   * @example metadata: { root: process.cwd() }
   */
  metadata?: Record<string, string>;
}

/** A model that records its calls; `cassette` holds everything recorded so far. */
export interface RecordingModel extends Model {
  readonly cassette: Cassette;
}

/**
 * Wraps a model and records each call: the request (system prompt, messages, tools; never the
 * model's options, so no key or header) and every event streamed back, with its time relative
 * to the start of the call. Events pass through unchanged, each after it was recorded. Tool-call
 * arguments nested deeper than any run accepts (1000 levels) are recorded as the loop takes them:
 * `arguments: {}` and the model's text in `rawArguments`, so a replay gets the same error result.
 *
 * @example
 * const recorder = recordingModel(openaiChat({ model: "gpt-4o-mini" }), { sink: cassetteFileSink("bug.cassette.jsonl") });
 * // ...run the agent with `recorder`, then replay with cassetteModel(readCassette("bug.cassette.jsonl"))
 */
export function recordingModel(model: Model, options: RecordingModelOptions = {}): RecordingModel {
  const scheduler = options.scheduler ?? asyncScheduler;
  const secrets = options.secrets ?? [];
  const metadata = options.metadata === undefined ? {} : { metadata: { ...options.metadata } };
  const cassette: Cassette = { version: 1, model: { id: model.id, provider: model.provider, api: model.api }, ...metadata, calls: [] };
  const write = (record: CassetteRecord) => options.sink?.write(record);
  write({ kind: "cassette", version: 1, model: cassette.model, ...metadata });
  return {
    id: model.id,
    provider: model.provider,
    api: model.api,
    cassette,
    stream: (context, streamOptions) =>
      defer(() => {
        const call = cassette.calls.length;
        const startedAt = scheduler.now();
        const request = cassetteRequestOf(context, secrets);
        const events: CassetteEvent[] = [];
        cassette.calls.push({ request, events });
        write({ kind: "call", call, request });
        let previous: AssistantMessage | undefined;
        return model.stream(context, streamOptions).pipe(
          tap((received) => {
            // Recorded as the loop takes it: arguments nested past any run's limit (the deepest
            // any run accepts, so what is within it is recorded as sent) replaced, since writing
            // them out would overflow the stack. Every block, every event: the provider may have
            // changed the message since it handed it out (see the snapshot below).
            const event = wholeBoundedModelEvent(received, HIGHEST_JSON_DEPTH);
            const message = messageOf(event);
            const recorded: CassetteEvent = redactCredentials({ at: scheduler.now() - startedAt, event: fieldsOf(event) }, secrets);
            const changes = messageChanges(previous, message);
            if (changes) recorded.changes = redactCredentials(changes, secrets);
            // A snapshot: a provider may mutate the message it handed out.
            previous = structuredClone(message);
            events.push(recorded);
            write({ kind: "event", call, ...recorded });
          }),
        );
      }),
  };
}

/** The message an event carries. */
export function messageOf(event: ModelEvent): AssistantMessage {
  if (event.type === "done") return event.message;
  if (event.type === "error") return event.error;
  return event.partial;
}

/** The key under which an event type carries its message. */
export function messageKeyOf(type: ModelEvent["type"]): "message" | "error" | "partial" {
  return type === "done" ? "message" : type === "error" ? "error" : "partial";
}

function fieldsOf(event: ModelEvent): EventFields {
  const fields: Record<string, unknown> = { ...event };
  delete fields[messageKeyOf(event.type)];
  return JSON.parse(JSON.stringify(fields)) as EventFields;
}
