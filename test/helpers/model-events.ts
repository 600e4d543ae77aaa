import type { Observable } from "rxjs";
import { defer } from "rxjs";
import { emptyUsage } from "../../src/types/messages.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { Model, ModelErrorEvent, ModelEvent, ModelFailure } from "../../src/types/model.js";

/** Hand-made model events for middleware specs: one text reply or one failure, from one model. */
export function modelEvents(model = "primary") {
  const message = (content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"] = "stop"): AssistantMessage => ({
    role: "assistant",
    content,
    api: "test",
    provider: "test",
    model,
    usage: emptyUsage(),
    stopReason,
    timestamp: 0,
  });
  const start: ModelEvent = { type: "start", partial: message([]) };
  const text: ModelEvent = { type: "text_start", contentIndex: 0, partial: message([{ type: "text", text: "" }]) };
  const delta: ModelEvent = { type: "text_delta", contentIndex: 0, delta: "Hi", partial: message([{ type: "text", text: "Hi" }]) };
  const done: ModelEvent = { type: "done", reason: "stop", message: message([{ type: "text", text: "Hi" }]) };
  const failed = (errorMessage: string, failure?: ModelFailure): ModelErrorEvent => ({
    type: "error",
    reason: "error",
    error: { ...message([], "error"), errorMessage },
    ...(failure ? { failure } : {}),
  });
  const failedAfterText = (errorMessage: string): ModelErrorEvent => ({
    type: "error",
    reason: "error",
    error: { ...message([{ type: "text", text: "Hi" }], "error"), errorMessage },
  });
  return { message, start, text, delta, done, failed, failedAfterText };
}

/** A model whose nth call plays the nth stream (the last one again past the end). */
export function modelOfAttempts(streams: Observable<ModelEvent>[], id = "primary"): Model & { calls: number } {
  const model = {
    id,
    provider: "test",
    api: "test",
    calls: 0,
    stream: () => defer(() => streams[Math.min(model.calls++, streams.length - 1)]!),
  };
  return model;
}
