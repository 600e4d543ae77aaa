import type { Observable } from "rxjs";
import { catchError, defer, map, throwError } from "rxjs";
import type { AssistantMessage, FailedModelCall } from "../types/messages.js";
import type { LlmContext, Model, ModelErrorEvent, ModelEvent, ModelStreamOptions } from "../types/model.js";
import { withMessageFields } from "../util/shared-content.js";
import { errorMessageOf, FailedBeforeContent, failBeforeContent } from "./fail-before-content.js";
import { hasUsage, spentBy } from "./run-usage.js";

export interface FallbackOptions {
  /** Which failures hand the call to the next model. Default: every failure but an abort. */
  on?: (event: ModelErrorEvent) => boolean;
}

/**
 * One model made of several: a call that fails before its first content event goes to the next
 * model in the list, at once.
 *
 * ```text
 * primary:   s-e                    (503)
 * secondary:    s-t-d|
 * result:    ---(st)-d|             message.model = secondary's, fallbackFrom = [primary's failure]
 * ```
 *
 * Contract: the answer's message (`provider`, `model`) is the model that answered, and its
 * `fallbackFrom` lists the calls that failed before it (also on every partial, so
 * `message_start` shows it). When every model fails, the last failure ends the stream, with
 * `fallbackFrom` listing the others. A failure after content streamed is never handed over.
 * A failed call that reported usage keeps it in its `fallbackFrom` record, so `runUsage` bills it.
 * The returned model's `id`, `provider` and `api` are the primary's.
 * @example const model = withFallback([openaiChat({ model: "gpt-4.1" }), fromPiAi(claude)])
 */
export function withFallback(models: readonly [Model, ...Model[]], options: FallbackOptions = {}): Model {
  const on = options.on ?? ((event: ModelErrorEvent) => event.reason === "error");
  const [primary] = models;
  return {
    id: primary.id,
    provider: primary.provider,
    api: primary.api,
    stream(context: LlmContext, streamOptions: ModelStreamOptions): Observable<ModelEvent> {
      const attempt = (index: number, failed: readonly FailedModelCall[]): Observable<ModelEvent> => {
        const model = models[index] as Model;
        const isLast = index === models.length - 1;
        // The failure is judged before it is marked, so a failed call's record holds only what it spent.
        const judged = defer(() => model.stream(context, streamOptions)).pipe(failBeforeContent((event) => !isLast && !streamOptions.signal.aborted && on(event)));
        return (failed.length === 0 ? judged : judged.pipe(map((event) => recordFallback(event, failed)))).pipe(
          catchError((error: unknown) => {
            if (!(error instanceof FailedBeforeContent)) return throwError(() => error);
            return attempt(index + 1, [...failed, failedCall(error.event.error)]);
          }),
        );
      };
      return attempt(0, []);
    },
  };
}

function failedCall(message: AssistantMessage): FailedModelCall {
  const failed: FailedModelCall = { provider: message.provider, model: message.model, errorMessage: errorMessageOf(message) };
  // Its retries and, for a withFallback inside, the calls it fell back from: the run's bill counts them (runUsage).
  const usage = spentBy(message);
  if (hasUsage(usage)) failed.usage = usage;
  return failed;
}

/** The event with `fallbackFrom` on the message it carries. */
function recordFallback(event: ModelEvent, fallbackFrom: readonly FailedModelCall[]): ModelEvent {
  // Without building a long partial's content (SharedContent): a spread would, on every event.
  const mark = (message: AssistantMessage): AssistantMessage => withMessageFields(message, { fallbackFrom: [...fallbackFrom] });
  // What is no event passes on as it came: the loop, after this, says why it cannot use it.
  if (typeof event !== "object" || event === null) return event;
  switch (event.type) {
    case "done":
      return { ...event, message: mark(event.message) };
    case "error":
      return { ...event, error: mark(event.error) };
    default:
      return { ...event, partial: mark(event.partial) };
  }
}
