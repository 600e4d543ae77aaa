import type { AssistantMessage } from "../types.js";
import type { ArgumentText, MessageDeltaEncoder, WireModelEvent } from "../protocol/message-delta.js";

/** What a `message_update` looks like merged: the latest model event and the whole message. */
export interface MergedUpdate {
  event: WireModelEvent;
  message: AssistantMessage;
  /** Protocol 3: the argument text of the message's tool calls still streaming (see `UpdateFrame`). */
  argumentTexts?: ArgumentText[];
}

/**
 * An update a slow client's queue may merge with the one before it; `merged()` gives its merged
 * form. Ask while the update is the session's latest: the session sends it to its clients at once.
 */
export interface MergeableUpdate {
  merged(): MergedUpdate;
}

/**
 * The update an encoder just made, its merged form made when asked. Why not at once: only a
 * client whose queue holds an update merges, and every event paid for the whole message's
 * snapshot and an array of argument texts. The encoder moves on with the next event.
 */
class EncoderUpdate implements MergeableUpdate {
  constructor(
    private readonly event: WireModelEvent,
    private readonly encoder: MessageDeltaEncoder,
  ) {}

  merged(): MergedUpdate {
    const message = this.encoder.current as AssistantMessage;
    const argumentTexts = this.encoder.argumentTexts();
    return argumentTexts.length > 0 ? { event: this.event, message, argumentTexts } : { event: this.event, message };
  }
}

/** The update an encoder just made, mergeable; undefined when no message streams. */
export function mergeableUpdate(event: WireModelEvent, encoder: MessageDeltaEncoder): MergeableUpdate | undefined {
  return encoder.streaming ? new EncoderUpdate(event, encoder) : undefined;
}
