/* eslint-disable @typescript-eslint/no-explicit-any -- the reference's `Model<any>`, see types.ts */
import {
  EventStream,
  parseStreamingJson,
  type AssistantMessage,
  type AssistantMessageEvent,
  type Context,
  type Model,
  type SimpleStreamOptions,
  type StopReason,
} from "@mariozechner/pi-ai";
import { errorText } from "../errors.js";
import { isBlockIndex } from "../pi-ai/pi-ai-snapshots.js";
import { withField } from "../util/with-field.js";

/** The events a proxy server sends: pi-ai's, without the `partial` message (the client rebuilds it). */
export type ProxyAssistantMessageEvent =
  | { type: "start" }
  | { type: "text_start"; contentIndex: number }
  | { type: "text_delta"; contentIndex: number; delta: string }
  | { type: "text_end"; contentIndex: number; contentSignature?: string }
  | { type: "thinking_start"; contentIndex: number }
  | { type: "thinking_delta"; contentIndex: number; delta: string }
  | { type: "thinking_end"; contentIndex: number; contentSignature?: string }
  | { type: "toolcall_start"; contentIndex: number; id: string; toolName: string }
  | { type: "toolcall_delta"; contentIndex: number; delta: string }
  | { type: "toolcall_end"; contentIndex: number }
  | { type: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse">; usage: AssistantMessage["usage"] }
  | { type: "error"; reason: Extract<StopReason, "aborted" | "error">; errorMessage?: string; usage: AssistantMessage["usage"] };

type ProxySerializableStreamOptions = Pick<
  SimpleStreamOptions,
  "temperature" | "maxTokens" | "reasoning" | "cacheRetention" | "sessionId" | "headers" | "metadata" | "transport" | "thinkingBudgets" | "maxRetryDelayMs"
>;

export interface ProxyStreamOptions extends ProxySerializableStreamOptions {
  /** Aborts the request to the proxy. */
  signal?: AbortSignal;
  /** Sent as `Authorization: Bearer …`. */
  authToken: string;
  /** The proxy server, e.g. "https://genai.example.com"; the request goes to `/api/stream` under it. */
  proxyUrl: string;
}

const SENT_OPTIONS = ["temperature", "maxTokens", "reasoning", "cacheRetention", "sessionId", "headers", "metadata", "transport", "thinkingBudgets", "maxRetryDelayMs"] as const;

/**
 * A `streamFn` for apps whose server holds the provider keys: POSTs the model, context and the
 * serializable options to `${proxyUrl}/api/stream` and reads back server-sent events, one
 * `ProxyAssistantMessageEvent` per `data:` line, rebuilding the message as it grows. Failures
 * are data: an HTTP error, a broken stream or an abort end with an `error` event.
 *
 * @example
 * new Agent({ streamFn: (model, context, options) => streamProxy(model, context, { ...options, authToken, proxyUrl }) });
 */
export function streamProxy(model: Model<any>, context: Context, options: ProxyStreamOptions): EventStream<AssistantMessageEvent, AssistantMessage> {
  const stream = new EventStream<AssistantMessageEvent, AssistantMessage>(
    (event) => event.type === "done" || event.type === "error",
    (event) => (event.type === "done" ? event.message : event.type === "error" ? event.error : (undefined as never)),
  );
  const message: AssistantMessage = {
    role: "assistant",
    stopReason: "stop",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    // The edge of the library, as pi-ai's own messages: wall-clock time.
    timestamp: Date.now(),
  };
  const sent: Record<string, unknown> = {};
  for (const key of SENT_OPTIONS) sent[key] = options[key];
  const request = fetch(`${options.proxyUrl}/api/stream`, {
    method: "POST",
    headers: { Authorization: `Bearer ${options.authToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model, context, options: sent }),
    signal: options.signal ?? null,
  });
  readEvents(request, message, stream).catch((error: unknown) => {
    const aborted = options.signal?.aborted === true;
    message.stopReason = aborted ? "aborted" : "error";
    message.errorMessage = aborted ? "Request aborted" : errorText(error);
    stream.push({ type: "error", reason: message.stopReason, error: message });
    stream.end();
  });
  return stream;
}

async function readEvents(request: Promise<Response>, message: AssistantMessage, stream: EventStream<AssistantMessageEvent, AssistantMessage>): Promise<void> {
  const response = await request;
  if (!response.ok || response.body === null) {
    const body = (await response.json().catch(() => ({}))) as { error?: string };
    throw new Error(`Proxy error: ${body.error ?? `${response.status} ${response.statusText}`}`);
  }
  const decoder = new TextDecoder();
  const rawArguments = new Map<number, string>();
  let buffered = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data: ")) continue;
      const data = line.slice("data: ".length).trim();
      if (data === "") continue;
      const event = applyProxyEvent(JSON.parse(data) as ProxyAssistantMessageEvent, message, rawArguments);
      // An event type this version does not know is left out, as the reference does: a newer proxy may send more.
      if (event === undefined) continue;
      stream.push(event);
      if (event.type === "done" || event.type === "error") {
        stream.end();
        return;
      }
    }
  }
  throw new Error("The proxy's stream ended without a done or error event");
}

/**
 * Applies one proxy event to the message and returns pi-ai's event for it, or `undefined` for an
 * event type it does not know (left out, as the reference leaves it out). Exported for its test
 * (test/pi-agent-core/proxy.test.ts), not from the package.
 */
export function applyProxyEvent(event: ProxyAssistantMessageEvent, message: AssistantMessage, rawArguments: Map<number, string>): AssistantMessageEvent | undefined {
  const partial = message;
  if (typeof event !== "object" || event === null) throw new Error(`The proxy sent an event that is not an object: ${JSON.stringify(event)?.slice(0, 100)}`);
  // An index far past the content (10^9) made the message's array that long: the next copy of
  // it took the process's memory.
  if ("contentIndex" in event && !isBlockIndex(event.contentIndex, message.content.length)) {
    throw new Error(`The proxy sent ${event.type} for content ${JSON.stringify(event.contentIndex)}, which is no index of its ${message.content.length} blocks or the next`);
  }
  switch (event.type) {
    case "start":
      return { type: "start", partial };
    case "text_start":
      message.content[event.contentIndex] = { type: "text", text: "" };
      return withField(event, "partial", partial);
    case "thinking_start":
      message.content[event.contentIndex] = { type: "thinking", thinking: "" };
      return withField(event, "partial", partial);
    case "toolcall_start":
      message.content[event.contentIndex] = { type: "toolCall", id: event.id, name: event.toolName, arguments: {} };
      rawArguments.set(event.contentIndex, "");
      return { type: "toolcall_start", contentIndex: event.contentIndex, partial };
    case "text_delta":
    case "thinking_delta":
    case "toolcall_delta": {
      const block = message.content[event.contentIndex];
      if (block?.type === "text") block.text += event.delta;
      else if (block?.type === "thinking") block.thinking += event.delta;
      else if (block?.type === "toolCall") {
        const raw = (rawArguments.get(event.contentIndex) ?? "") + event.delta;
        rawArguments.set(event.contentIndex, raw);
        block.arguments = parseStreamingJson(raw);
      } else throw new Error(`The proxy sent ${event.type} for content ${event.contentIndex}, which it never started`);
      return withField(event, "partial", partial);
    }
    case "text_end":
    case "thinking_end": {
      const block = message.content[event.contentIndex];
      if (block?.type === "text") {
        if (event.contentSignature !== undefined) block.textSignature = event.contentSignature;
        return { type: "text_end", contentIndex: event.contentIndex, content: block.text, partial };
      }
      if (block?.type === "thinking") {
        if (event.contentSignature !== undefined) block.thinkingSignature = event.contentSignature;
        return { type: "thinking_end", contentIndex: event.contentIndex, content: block.thinking, partial };
      }
      throw new Error(`The proxy sent ${event.type} for content ${event.contentIndex}, which it never started`);
    }
    case "toolcall_end": {
      const block = message.content[event.contentIndex];
      if (block?.type !== "toolCall") throw new Error(`The proxy sent toolcall_end for content ${event.contentIndex}, which is no tool call`);
      rawArguments.delete(event.contentIndex);
      return { type: "toolcall_end", contentIndex: event.contentIndex, toolCall: block, partial };
    }
    case "done":
      message.stopReason = event.reason;
      message.usage = event.usage;
      return { type: "done", reason: event.reason, message };
    case "error":
      message.stopReason = event.reason;
      message.usage = event.usage;
      if (event.errorMessage !== undefined) message.errorMessage = event.errorMessage;
      return { type: "error", reason: event.reason, error: message };
    default:
      return undefined;
  }
}
