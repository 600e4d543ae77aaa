import { MessageDeltaDecoder } from "../protocol/message-delta-decoder.js";
import { isImpliedPatch } from "../protocol/message-delta.js";
import type { MessagePatchOperation, ServerFrame, UpdateFrame } from "../protocol/protocol-schemas.js";
import type { AssistantMessage } from "../types.js";
import { sameJson } from "../util/same-json.js";
import { contentBlockAt } from "../util/shared-content.js";
import { withField } from "../util/with-field.js";

/** The type of the event an event frame carries, when the frame starts as the server writes it. */
const EVENT_TYPE = /^\{"type":"event","seq":\d+,"event":\{"type":"([a-z_]+)"/;

/**
 * Rewrites the frames of a protocol-3 session, one client's worth, into protocol 2 for a client
 * that did not say it reads 3 (an older `connectAgent`, a client written against version 2).
 * Why per client and not a second encoding per session: every client of this package reads 3,
 * so the session writes, logs and shares one encoding, and only such a client pays: a
 * `JSON.parse` of each frame of the streamed message (its start, updates and end), and of the
 * ack and snapshots; other events (a tool's result, a run's end) go out unread.
 *
 * It stays idle until an attach `ack` says `protocol: 3` (rewritten to 2), then follows the
 * session as the client would: a `j` operation becomes `{i, k, v}` with the arguments it stands
 * for, an `end` frame the `message_end` event with the whole message, and `argumentTexts` are
 * dropped. Frames that need no change go out as they came.
 *
 * Contract: it sees every frame the client gets, in order, from the attach `ack` on (the server
 * sends such a client a snapshot, never a replay, so the message a frame patches is known);
 * throws on a frame it cannot follow (the client is then dropped, and reconnects).
 */
export class ProtocolDowngrade {
  private active = false;
  private readonly decoder = new MessageDeltaDecoder();

  /** The frame as the client gets it. */
  frame(json: string): string {
    if (!this.active && !json.startsWith('{"type":"ack"')) return json;
    // An event the decoder does not follow (a tool's result, a run's end: the largest frames)
    // goes out unread; the type is read from the JSON's start, as the server writes it.
    const eventType = EVENT_TYPE.exec(json)?.[1];
    if (eventType !== undefined && !eventType.startsWith("message_")) return json;
    const frame = JSON.parse(json) as ServerFrame;
    switch (frame.type) {
      case "ack":
        if (frame.protocol === undefined) return json;
        this.active = frame.protocol >= 3;
        this.decoder.reset(undefined);
        return this.active ? JSON.stringify({ ...frame, protocol: 2 }) : json;
      case "snapshot": {
        this.decoder.reset(frame.state.streamingMessage, frame.argumentTexts);
        if (frame.argumentTexts === undefined) return json;
        const { argumentTexts: _dropped, ...snapshot } = frame;
        return JSON.stringify(snapshot);
      }
      case "event":
        this.decoder.observe(frame.event);
        return json;
      case "end":
        return JSON.stringify({ type: "event", seq: frame.seq, event: this.decoder.end(frame) });
      case "update":
        return this.update(frame, json);
      default:
        return json;
    }
  }

  private update(frame: UpdateFrame, json: string): string {
    const before = this.decoder.current;
    const { message } = this.decoder.decode(frame);
    if (frame.argumentTexts !== undefined) {
      const { argumentTexts: _dropped, ...merged } = frame;
      return JSON.stringify(merged);
    }
    if (!frame.patch?.some((operation) => "j" in operation)) return json;
    // As protocol 2 sends them: the arguments whole, and only when they changed (a `j` also
    // stands for a fresh parse equal to the last).
    const fieldOf = (held: AssistantMessage | undefined, index: number, key: string) => (held === undefined ? undefined : (contentBlockAt(held, index) as unknown as Record<string, unknown> | undefined)?.[key]);
    const patch = frame.patch.flatMap((operation): MessagePatchOperation[] => {
      if (!("j" in operation)) return [operation];
      const value = fieldOf(message, operation.i, operation.k);
      return sameJson(value, fieldOf(before, operation.i, operation.k)) ? [] : [{ i: operation.i, k: operation.k, v: value }];
    });
    const { patch: _replaced, ...rest } = frame;
    return JSON.stringify(isImpliedPatch(patch, frame.event) ? rest : withField(rest, "patch", patch));
  }
}
