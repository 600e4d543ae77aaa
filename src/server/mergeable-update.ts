import type { AssistantMessage } from "../types.js";
import type { ArgumentText, MessageDeltaEncoder, WireModelEvent } from "../protocol/message-delta.js";

/** What a `message_update` looks like merged: the latest model event and the whole message. */
export interface MergeableUpdate {
  event: WireModelEvent;
  message: AssistantMessage;
  /** Protocol 3: the argument text of the message's tool calls still streaming (see `UpdateFrame`). */
  argumentTexts?: ArgumentText[];
}

/** The merged form of the update an encoder just made. */
export function mergeableUpdate(event: WireModelEvent, encoder: MessageDeltaEncoder): MergeableUpdate | undefined {
  const message = encoder.current;
  if (message === undefined) return undefined;
  const argumentTexts = encoder.argumentTexts();
  return argumentTexts.length > 0 ? { event, message, argumentTexts } : { event, message };
}
