import type { ArgumentText, MessageDeltaEncoder, MessagePatchOperation, UpdateFrame, WireModelEvent } from "../protocol/message-delta.js";
import type { AgentEvent, AssistantMessage } from "../types.js";
import type { LoggedFrame } from "./event-log.js";
import { repairedJson } from "../util/repaired-json.js";

/**
 * The frame of one session event, encoded by `encoder` and serialized: a streamed message's end
 * as an `end` frame (protocol 3, a patch to what clients hold), a `message_update` as an `update`
 * frame (`update`, its parts), anything else as an `event` frame. One writer for the server's
 * sessions and those on Redis.
 */
export function sessionFrameOf(encoder: MessageDeltaEncoder, seq: number, event: AgentEvent): { json: string; update: Omit<UpdateFrame, "seq"> | undefined } {
  const end = event.type === "message_end" ? encoder.endPatch(event.message) : undefined;
  if (end !== undefined) return { json: JSON.stringify({ type: "end", seq, ...(end.length > 0 ? { patch: end } : {}) }), update: undefined };
  const update = encoder.encode(event);
  return { json: update ? updateFrameJson(seq, update) : `{"type":"event","seq":${seq},"event":${repairedJson(event)}}`, update };
}

/** The JSON of an update frame: one writer, so the live frame and the log's agree to the byte. */
export function updateFrameJson(seq: number, update: Omit<UpdateFrame, "seq">): string {
  return JSON.stringify({ type: "update", seq, event: update.event, patch: update.patch });
}

/**
 * A `message_update` as the session's log keeps it: the frame's parts, serialized again when a
 * resuming client reads it. Why: the log kept each delta a second time as frame JSON beside the
 * run's events, which hold the same delta strings (1 MB of streamed arguments: 1.2 MB of frames,
 * a quarter of the server's heap; bench/README.md). Only frames of a long delta whose patch
 * carries no values (`a` and `j` operations) are kept so: a value is larger as objects than as its
 * JSON, and so is a short delta's frame (10,000 small calls in 16-character deltas: 72.8 MB
 * retained with every frame as JSON, 79.2 MB with every frame as parts).
 */
export class RebuiltUpdateFrame implements LoggedFrame {
  readonly type = "message_update";

  constructor(
    readonly seq: number,
    private readonly update: Omit<UpdateFrame, "seq">,
    readonly jsonLength: number,
  ) {}

  get json(): string {
    return updateFrameJson(this.seq, this.update);
  }

  /** Whether `update` is kept as parts (see the class). */
  static suits(update: Omit<UpdateFrame, "seq">): boolean {
    const delta = update.event.delta;
    return typeof delta === "string" && delta.length >= LONG_DELTA && (update.patch === undefined || update.patch.every(carriesNoValue));
  }
}

/** Characters from which a delta's frame is smaller as its parts than as JSON (about 130 bytes of objects against the JSON's envelope). */
const LONG_DELTA = 128;

function carriesNoValue(operation: MessagePatchOperation): boolean {
  return !("v" in operation) && !("b" in operation);
}

/**
 * A streamed message's updates as the session's log keeps them once the message has ended: one
 * update frame for `first..seq` carrying the whole message as of `seq` (as a slow client's merged
 * frame does), serialized when a resuming client reads it; a client resuming inside the range
 * reads it from its own next number on (`from`). Why: the log kept a frame per delta
 * beside the run's events and the transcript, up to 8 MiB of JSON for one long reply (10,000
 * small calls), where the message they built is all a client resuming from before it needs.
 * `jsonLength` is what the merged frames measured (`EventLog.merge`): the log's byte bound then
 * evicts as before.
 */
export class MergedUpdateFrame implements LoggedFrame {
  readonly type = "message_update";

  constructor(
    readonly seq: number,
    private readonly first: number,
    private readonly event: WireModelEvent,
    private readonly message: AssistantMessage,
    private readonly argumentTexts: readonly ArgumentText[],
    readonly jsonLength: number,
  ) {}

  from(first: number): MergedUpdateFrame {
    return new MergedUpdateFrame(this.seq, first, this.event, this.message, this.argumentTexts, this.jsonLength);
  }

  get json(): string {
    const { seq, first, event, message, argumentTexts } = this;
    return JSON.stringify(argumentTexts.length > 0 ? { type: "update", seq, first, event, message, argumentTexts } : { type: "update", seq, first, event, message });
  }
}
