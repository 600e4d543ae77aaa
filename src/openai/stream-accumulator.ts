import type { ModelEvent } from "../types/model.js";
import type { AssistantMessageOrigin } from "../model/assistant-message-draft.js";
import type { ModelCost } from "./openai-options.js";

/** What an accumulator needs to know about the call. */
export interface AccumulatorOptions extends AssistantMessageOrigin {
  cost?: ModelCost;
}

/**
 * A pure state machine from a provider's stream chunks to `ModelEvent`s.
 *
 * Contract: after a `done` or `error` event every method returns `[]`.
 */
export interface StreamAccumulator<Chunk> {
  /** Events for one chunk (the first chunk also yields `start`). */
  push(chunk: Chunk): ModelEvent[];
  /** Events for a stream that ended normally: closes open blocks and emits the terminal event. */
  end(): ModelEvent[];
  /** Events for a stream that failed: exactly one `error` event (with `start` if not sent yet). */
  fail(error: unknown): ModelEvent[];
}
