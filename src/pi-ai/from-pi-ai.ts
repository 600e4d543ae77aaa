import {
  type Api,
  type AssistantMessageEvent,
  type AssistantMessageEventStream,
  getEnvApiKey,
  type Model as PiAiModel,
  type SimpleStreamOptions,
  streamSimple,
} from "@mariozechner/pi-ai";
import { Observable } from "rxjs";
import { errorText } from "../errors.js";
import { emptyAssistantMessage } from "../types/messages.js";
import type { AssistantMessage } from "../types/messages.js";
import type { LlmContext, Model, ModelEvent, ModelStreamOptions, ThinkingLevel } from "../types/model.js";
import { toPiAiContext } from "./pi-ai-context.js";
import { PiAiSnapshots, startOf } from "./pi-ai-snapshots.js";
import { redactText } from "../util/redact-credentials.js";

/** pi-ai's stream options, and where to send the request. */
export interface PiAiModelOptions extends Omit<SimpleStreamOptions, "signal"> {
  /**
   * Sends requests here instead of the model's own `baseUrl` (a proxy, a gateway, a local server).
   *
   * Contract: the URL the provider's SDK would otherwise use, e.g. `https://api.anthropic.com`
   * for Anthropic or `https://generativelanguage.googleapis.com/v1beta` for Gemini.
   * @example baseUrl: "http://127.0.0.1:8080"
   */
  baseUrl?: string;
  /**
   * The function that opens pi-ai's stream. Default: pi-ai's `streamSimple`, which picks the
   * provider by the model's `api`; pass `stream` (or a provider's own) for provider options.
   * It may return a Promise of the stream (pi-agent-core's `streamFn` does, to look up a key
   * first); a rejection fails the call as data, as a throw does.
   */
  stream?: (
    model: PiAiModel<Api>,
    context: Parameters<typeof streamSimple>[1],
    options: SimpleStreamOptions,
  ) => AssistantMessageEventStream | PromiseLike<AssistantMessageEventStream>;
}

/**
 * Turns a pi-ai model into an rxagent `Model`: about twenty providers (Anthropic, Gemini,
 * Bedrock, Mistral, Groq, xAI, OpenRouter, local OpenAI-compatible servers, ...) streaming the
 * same events and messages as rxagent's own.
 *
 * Each subscription is one request, with its own AbortController as the stream's signal:
 * unsubscribing, or the loop's `signal` firing, aborts it. pi-ai's events pass through with
 * their deltas unchanged (partial tool-call JSON, thinking and its signatures, redacted
 * thinking, usage with cache reads and writes); each carries a snapshot of the message.
 * Failures are data: a provider error, an HTTP error or an abort ends with an `error` event
 * whose message keeps the content and usage so far and says what went wrong. pi-ai's SDKs
 * retry some HTTP errors (429, 5xx, Anthropic's 529) on their own: set `maxRetries`.
 *
 * @example
 * import { getModel } from "@mariozechner/pi-ai";
 * const model = fromPiAi(getModel("anthropic", "claude-sonnet-4-5"), { reasoning: "low" });
 *
 * A call's `thinkingLevel` (`AgentLoopConfig.thinkingLevel`, `Agent.replaceState`) replaces
 * `reasoning` for that call; `"off"` sends none.
 */
export function fromPiAi<TApi extends Api>(model: PiAiModel<TApi>, options: PiAiModelOptions = {}): Model {
  const { baseUrl, stream = streamSimple, ...streamOptions } = options;
  const target: PiAiModel<Api> = baseUrl === undefined ? model : { ...model, baseUrl };
  return {
    id: model.id,
    provider: model.provider,
    api: model.api,
    stream: (context: LlmContext, { signal, thinkingLevel }: ModelStreamOptions) =>
      new Observable<ModelEvent>((subscriber) => {
        const controller = new AbortController();
        const abort = (): void => controller.abort(signal.reason);
        signal.addEventListener("abort", abort, { once: true });
        if (signal.aborted) abort();
        let settled = false;
        let started = false;
        const emit = (event: ModelEvent): void => {
          if (event.type === "start") started = true;
          else if (!started) {
            // pi-ai fails without a `start` when the request fails before its response.
            const message = event.type === "error" ? event.error : event.type === "done" ? event.message : event.partial;
            subscriber.next(startOf(message));
            started = true;
          }
          subscriber.next(event);
        };
        const finish = (event: ModelEvent): void => {
          settled = true;
          emit(withoutKey(event, model.provider, streamOptions.apiKey));
          subscriber.complete();
        };
        const pump = async (events: AsyncIterable<AssistantMessageEvent>): Promise<void> => {
          const snapshots = new PiAiSnapshots();
          let last: AssistantMessage | undefined;
          for await (const piAiEvent of events) {
            if (subscriber.closed) return;
            const event = snapshots.next(piAiEvent);
            if (event === undefined) continue;
            if (event.type === "done" || event.type === "error") {
              finish(event);
              return;
            }
            last = event.partial;
            emit(event);
          }
          // The edge of the library, like pi-ai's own messages: wall-clock time.
          finish(failure(last ?? emptyAssistantMessage(target, Date.now()), "pi-ai's stream ended without a done or error event", controller.signal));
        };
        try {
          const opened = stream(target, toPiAiContext(context), { ...withThinkingLevel(streamOptions, thinkingLevel), signal: controller.signal });
          // A stream handed over at once is pumped at once: no extra microtask on the common path.
          const pumped = isPromiseLike(opened) ? Promise.resolve(opened).then(pump) : pump(opened);
          pumped.catch((error: unknown) => {
            if (!subscriber.closed) finish(failure(emptyAssistantMessage(target, Date.now()), errorText(error), controller.signal));
          });
        } catch (error) {
          // A provider that throws instead of streaming (e.g. no API key) still fails as data.
          finish(failure(emptyAssistantMessage(target, Date.now()), errorText(error), controller.signal));
        }
        return () => {
          signal.removeEventListener("abort", abort);
          if (!settled) controller.abort(new Error("The model call was unsubscribed"));
        };
      }),
  };
}

/**
 * pi-ai's options with the call's thinking level as `reasoning` (`"off"`: none, as
 * pi-agent-core sends it), or as they are when the call gave none.
 */
function withThinkingLevel(options: Omit<SimpleStreamOptions, "signal">, thinkingLevel: ThinkingLevel | undefined): Omit<SimpleStreamOptions, "signal"> {
  if (thinkingLevel === undefined) return options;
  const { reasoning: _configured, ...rest } = options;
  return thinkingLevel === "off" ? rest : { ...rest, reasoning: thinkingLevel };
}

function isPromiseLike(value: AssistantMessageEventStream | PromiseLike<AssistantMessageEventStream>): value is PromiseLike<AssistantMessageEventStream> {
  return typeof (value as PromiseLike<unknown>).then === "function";
}

function failure(partial: AssistantMessage, errorMessage: string, signal: AbortSignal): ModelEvent {
  const reason = signal.aborted ? "aborted" : "error";
  return { type: "error", reason, error: { ...partial, content: [...partial.content], stopReason: reason, errorMessage } };
}

/**
 * Blanks the API key (and anything that looks like a credential) in an error event's message:
 * a provider or proxy may quote the key in its error text (issue 27, row 8). The key is the one
 * given, and the one pi-ai reads from the provider's environment variable (`GROQ_API_KEY`, …) when
 * none is given: the patterns know only a few providers' forms, and a Groq or xAI key quoted in a
 * 401 went through whole.
 */
function withoutKey(event: ModelEvent, provider: string, apiKey: string | undefined): ModelEvent {
  if (event.type !== "error" || typeof event.error.errorMessage !== "string") return event;
  const keys = [apiKey, environmentKeyOf(provider)].filter((key): key is string => typeof key === "string");
  const errorMessage = redactText(event.error.errorMessage, keys);
  return errorMessage === event.error.errorMessage ? event : { ...event, error: { ...event.error, errorMessage } };
}

/** The key pi-ai reads from the environment for `provider`; none where there is no environment to read (a browser). */
function environmentKeyOf(provider: string): string | undefined {
  try {
    return getEnvApiKey(provider);
  } catch {
    return undefined;
  }
}
