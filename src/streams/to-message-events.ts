import { NEVER, type Observable, type Observer, type Subscribable, Subscription } from "rxjs";
import { reserveFinalizerSlots } from "../operators/finalizer-slot.js";
import { errorText, RxAgentError } from "../errors.js";
import { describe, isUsablePartial, problemOfModelMessage } from "../model/check-model-message.js";
import { boundedModelEvent, ToolCallBounds } from "../model/bounded-tool-calls.js";
import type { AgentEvent, AssistantMessage, ModelEvent, StopReason } from "../types.js";
import { redactText } from "../util/redact-credentials.js";

/** What one model call tells the loop, and what it builds the messages the model did not deliver from. */
export interface ModelCallHooks {
  /** Builds the final message the loop uses when the model did not deliver one. */
  fallback(partial: AssistantMessage | undefined, stopReason: Extract<StopReason, "error" | "aborted">, errorMessage: string): AssistantMessage;
  /** The model itself delivered its final event. */
  modelEnded(): void;
  /** Fires the model's signal (abort). */
  abortModel(): void;
  /** The model's final message as the transcript keeps it (`settledModelMessage`, with the run's tool-call ids). */
  settle(message: AssistantMessage): AssistantMessage;
}

/**
 * Maps one model call's events to the assistant message's `message_start`, `message_update`s
 * and `message_end` on `subscriber`, then completes it; returns the subscription to the model.
 *
 * Emits `message_end` exactly once, whatever the model does: on `done`/`error` it carries the
 * model's final message (`hooks.settle`: tool calls with a repeated id renamed); when
 * the model Observable errors, completes without a final event, sends something that is not an
 * event or a final event without a usable message, it carries an error message built by
 * `hooks.fallback`. An event without a `partial` is skipped (the final message carries
 * everything). A model that skipped `start` still gets a `message_start` first. The source is
 * unsubscribed as soon as the message has ended, which aborts the request. `hooks.modelEnded` is
 * told when the model itself delivered its final event. Tool calls whose arguments nest deeper
 * than `maxJsonDepth` are replaced first (`boundedModelEvent`).
 *
 * When `abort$` emits, `hooks.abortModel` fires the model's signal first: a model that answers at
 * once with its own final message (its partial content, usage and error text) ends the message
 * with it; one that does not is ended at once with an aborted message built by `fallback`.
 *
 * Why a function that subscribes and not an operator: it runs once per turn, and the operator's
 * Observable and closures were a tenth of what a run waiting for its model holds (bench W5).
 */
export function subscribeMessageEvents(
  source: Subscribable<ModelEvent>,
  abort$: Observable<void>,
  hooks: ModelCallHooks,
  subscriber: Observer<AgentEvent>,
  maxJsonDepth: number,
): Subscription {
  const call = new MessageEvents(subscriber, hooks, maxJsonDepth);
  // Its finalizers: the abort's subscription, if any, and the model's teardown (see reserveFinalizerSlots).
  reserveFinalizerSlots(call, abort$ === NEVER ? 1 : 2);
  // NEVER, a run without a signal: nothing to listen to.
  if (abort$ !== NEVER) call.add(abort$.subscribe(() => call.abort()));
  if (call.ended) return call;
  // The call is its own subscription to the source (see MessageEvents); the abort's ends with it.
  call.add(source.subscribe(call));
  return call;
}

/**
 * One model call's messages events: the observer of the model's events. Why a class: a call is
 * made every turn and lives as long as the model streams, and one object with its methods on the
 * prototype replaces a handful of closures and their context. Why a `Subscription` too: rxjs
 * takes it as the subscriber itself instead of wrapping it in two more objects, which are two
 * calls per model event (see forwardingObserver).
 */
class MessageEvents extends Subscription implements Observer<ModelEvent> {
  started = false;
  ended = false;
  private partial: AssistantMessage | undefined;
  /** Made at the first event: a call waiting for its model holds none (48 bytes, bench W5). */
  private bounds: ToolCallBounds | undefined;

  constructor(
    private readonly subscriber: Observer<AgentEvent>,
    private readonly hooks: ModelCallHooks,
    private readonly maxJsonDepth: number,
  ) {
    super();
  }

  // Why each handler catches: its own code (the checks, `fallback`) runs inside rxjs's call of
  // the handler, where a throw would go to the unhandled-error path and the run would never end
  // (see forwardingObserver). Why not a forwardingObserver around this object: one more call per
  // model event, at a call site shared by every inner subscription of the loop.
  next(event: ModelEvent): void {
    try {
      this.take(event);
    } catch (error) {
      this.fail(error);
    }
  }

  error(error: unknown): void {
    if (this.ended || this.closed) return;
    try {
      const text = error instanceof RxAgentError ? error.message : `Model stream failed: ${errorText(error)}`;
      this.end(this.hooks.fallback(this.partial, "error", text));
    } catch (thrown) {
      this.fail(thrown);
    }
  }

  complete(): void {
    if (this.ended || this.closed) return;
    try {
      this.end(this.hooks.fallback(this.partial, "error", "Model stream completed without a done or error event"));
    } catch (error) {
      this.fail(error);
    }
  }

  abort(): void {
    if (this.ended) return;
    try {
      this.hooks.abortModel();
      this.end(this.hooks.fallback(this.partial, "aborted", "Request was aborted"));
    } catch (error) {
      this.fail(error);
    }
  }

  private take(received: ModelEvent): void {
    if (this.ended || this.closed) return;
    if (typeof received !== "object" || received === null) {
      this.end(this.hooks.fallback(this.partial, "error", `Model sent an event that is ${describe(received)}, not an object`));
      return;
    }
    // Tool-call arguments nested too deep are replaced before anything downstream recurses into them.
    const event = boundedModelEvent(received, (this.bounds ??= new ToolCallBounds(this.maxJsonDepth)));
    switch (event.type) {
      case "done":
        this.hooks.modelEnded();
        this.endWithModelMessage(event.message, "done");
        return;
      case "error":
        this.hooks.modelEnded();
        this.endWithModelMessage(event.error, "error");
        return;
      case "start":
        if (!isUsablePartial(event.partial)) return;
        this.partial = event.partial;
        this.start(event.partial);
        return;
      default:
        if (!isUsablePartial(event.partial)) return;
        this.partial = event.partial;
        this.start(event.partial);
        this.subscriber.next({ type: "message_update", message: event.partial, assistantMessageEvent: event });
    }
  }

  /** Ends with the model's final message, or with an error saying why it cannot be used. */
  private endWithModelMessage(message: AssistantMessage | undefined, eventType: "done" | "error"): void {
    const problem = problemOfModelMessage(message);
    if (problem === undefined) {
      this.end(this.hooks.settle(message!));
      return;
    }
    this.end(this.hooks.fallback(this.partial, "error", `Model sent a "${eventType}" event whose message ${problem}`));
  }

  /** A model that skipped `start` still gets a `message_start` first. */
  private start(message: AssistantMessage): void {
    if (this.started) return;
    this.started = true;
    this.subscriber.next({ type: "message_start", message });
  }

  /** The loop's own failure: the message cannot end as data, so the call errors. */
  private fail(error: unknown): void {
    this.ended = true;
    this.subscriber.error(error);
  }

  private end(ending: AssistantMessage): void {
    if (this.ended) return;
    this.ended = true;
    const message = withRedactedError(ending);
    this.start(message);
    this.subscriber.next({ type: "message_end", message });
    this.subscriber.complete();
  }
}

/**
 * The message with credential-like strings (`sk-…`, `AIza…`, `Bearer …`) blanked in its
 * `errorMessage`: a provider's error text may quote the key (some proxies do in a 401), and the
 * message goes to every client, the transcript and `--json`. Providers blank their own key
 * first; this catches any model's.
 */
function withRedactedError(message: AssistantMessage): AssistantMessage {
  if (typeof message.errorMessage !== "string") return message;
  const errorMessage = redactText(message.errorMessage);
  return errorMessage === message.errorMessage ? message : { ...message, errorMessage };
}
