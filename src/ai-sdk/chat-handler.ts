import type { Observable } from "rxjs";
import type { Agent, AgentEvent } from "../index.js";
import { callDetached, warnerOf } from "../util/detached-callback.js";
import { runChatCommand } from "./chat-commands.js";
import { isChatId, parseChatRequest, readBody, type Refusal } from "./chat-request.js";
import { toServerSentEvents, toUIMessageStream, UI_MESSAGE_STREAM_HEADERS, type UIMessageStreamOptions } from "./to-ui-message-stream.js";
import { errorText } from "../util/error-text.js";
import { problemOfAgent } from "../agent/problem-of-agent.js";

export interface ChatHandlerOptions {
  /**
   * Makes the agent of a chat the first time a POST names its id (useChat's `id`).
   *
   * Contract: return `undefined` to refuse the id (the client gets 404); the handler never
   * disposes the agent (see `onChatClose`).
   * @example createAgent: (chatId) => new Agent({ model, tools })
   */
  createAgent(chatId: string, request: Request): Agent | undefined | Promise<Agent | undefined>;
  /** The chat endpoint, useChat's `api`. Default `"/api/chat"`. */
  path?: string;
  /**
   * Checks each request before anything else; false answers 401.
   * @example auth: (request) => request.headers.get("authorization") === `Bearer ${token}`
   */
  auth?: (request: Request) => boolean | Promise<boolean>;
  /** Largest request body in bytes; a larger one gets 413. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Chats held at once; when full, the least recently used chat without a run is closed to make room, else 503. Default 100. */
  maxChats?: number;
  /**
   * Whether a client that goes away (a closed tab, useChat's `stop()`) aborts its run. Default
   * true. Set false to let runs finish for `resume: true` clients: then only the `abort`
   * command (`POST <path>/<id>/commands`) stops a run, since useChat's `stop()` looks the same
   * as a lost connection to the server.
   */
  abortOnDisconnect?: boolean;
  /** How events become chunks (tool outputs, message metadata), and how far a client may fall behind (`maxQueuedChunks`). */
  chunks?: Omit<UIMessageStreamOptions, "messageId">;
  /**
   * Called when a chat is closed (evicted, or by `close()`), to persist or dispose its agent. One
   * that throws or rejects is reported to `onWarning`; the chat closes all the same.
   */
  onChatClose?: (chatId: string, agent: Agent) => void;
  /** Told about problems that must not stop the handler (an `onChatClose` that failed). Default: `console.warn`. */
  onWarning?: (message: string) => void;
}

export interface ChatHandler {
  /** The path the handler answers under (`path`, and `path/<id>/stream`, `path/<id>/commands`). */
  readonly path: string;
  /** True when `pathname` is one of the handler's routes, so a server can fall through to its own. */
  handles(pathname: string): boolean;
  /** Answers one request (Fetch API), e.g. as a Next.js route's `POST` or a Deno/Bun server. */
  fetch(request: Request): Promise<Response>;
  chatIds(): string[];
  agent(chatId: string): Agent | undefined;
  /** Aborts every run, waits for them to end, and closes every chat. */
  close(): Promise<void>;
}

interface Chat {
  agent: Agent;
  /** The active run's events, replayed from its start (the Agent's own run log), for `resume`. */
  run: { events$: Observable<AgentEvent>; messageId: string } | undefined;
}

/**
 * A backend for the AI SDK's `useChat`: one `Agent` per chat id, each POST a run answered with
 * the UI message stream. Routes:
 * - `POST <path>`: useChat's `{ id, messages }`; runs the last user message's text.
 * - `GET <path>/<id>/stream`: the active run from its start (useChat's `resume: true`), or 204 (none, or no such chat).
 * - `POST <path>/<id>/commands`: `steer`, `follow_up`, `approve`, `deny`, `abort` (`ChatCommand`).
 *
 * @example
 * const chat = createChatHandler({ createAgent: () => new Agent({ model, tools }) });
 * export const POST = (request: Request) => chat.fetch(request);
 */
export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
  const path = (options.path ?? "/api/chat").replace(/\/$/, "");
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const maxChats = options.maxChats ?? 100;
  const abortOnDisconnect = options.abortOnDisconnect ?? true;
  const warn = warnerOf(options.onWarning);
  const chats = new Map<string, Chat>();
  const pending = new Map<string, Promise<Chat | Refusal>>();
  let closing = false;

  function route(pathname: string): { kind: "chat" } | { kind: "stream" | "commands"; chatId: string } | undefined {
    if (pathname === path) return { kind: "chat" };
    if (!pathname.startsWith(`${path}/`)) return undefined;
    const [chatId, action, ...rest] = pathname.slice(path.length + 1).split("/");
    if (rest.length > 0 || (action !== "stream" && action !== "commands")) return undefined;
    return { kind: action, chatId: decodedChatId(chatId ?? "") };
  }

  async function answer(request: Request): Promise<Response> {
    const target = route(new URL(request.url).pathname);
    if (!target) return refuse({ status: 404, message: "Not found." });
    if (closing) return refuse({ status: 503, message: "The server is shutting down." });
    if (options.auth && !(await options.auth(request))) return refuse({ status: 401, message: "Not authorized." });
    const method = target.kind === "stream" ? "GET" : "POST";
    if (request.method !== method) return refuse({ status: 405, message: `Use ${method} here.` }, { allow: method });
    if (target.kind === "stream") return resume(target.chatId);
    // useChat posts JSON; demanding it also keeps other sites out, whose pages can post plain
    // text or forms to any server without asking, but not JSON without a preflight.
    if (!(request.headers.get("content-type") ?? "").toLowerCase().startsWith("application/json")) {
      return refuse({ status: 415, message: "Send the body as application/json." });
    }
    const body = await readBody(request, maxBodyBytes);
    if (typeof body !== "string") return refuse(body);
    if (target.kind === "commands") return command(target.chatId, body);
    const parsed = parseChatRequest(body);
    if ("status" in parsed) return refuse(parsed);
    const chat = await chatFor(parsed.chatId, request);
    if ("status" in chat) return refuse(chat);
    if (chat.run || chat.agent.state.isStreaming) {
      return refuse({
        status: 409,
        message: `Chat "${parsed.chatId}" has a run going: wait for it, resume it (GET ${path}/${parsed.chatId}/stream), or steer it (POST ${path}/${parsed.chatId}/commands).`,
      });
    }
    return start(chat, parsed.text, request.signal);
  }

  function start(chat: Chat, text: string, signal: AbortSignal): Response {
    const messageId = crypto.randomUUID();
    const events$ = chat.agent.prompt(text);
    const run = { events$, messageId };
    chat.run = run;
    /** Set once the response's stream has ended (the run's end, or a slow reader cut off): a client that leaves after that stops nothing. */
    let answered = false;
    const leave = () => {
      if (abortOnDisconnect && !answered && chat.run === run) chat.agent.abort({ reason: new Error("The chat's client went away") });
    };
    const forget = () => signal.removeEventListener("abort", leave);
    signal.addEventListener("abort", leave, { once: true });
    // The client may have gone while createAgent ran: no abort event comes then.
    if (signal.aborted) leave();
    const clear = () => {
      if (chat.run === run) chat.run = undefined;
      forget();
    };
    events$.subscribe({ complete: clear, error: clear });
    // The client left when its reader cancels the body (Deno, Bun, Node's pipeline), not when the
    // events are unsubscribed: a reader cut off for falling behind is unsubscribed too, and its
    // run goes on for it to resume.
    const ended = () => {
      answered = true;
      forget();
    };
    return stream(events$, messageId, (body) => watchReader(body, { cancelled: leave, ended }));
  }

  function resume(chatId: string): Response {
    if (!isChatId(chatId)) return refuse({ status: 400, message: "Not a chat id." });
    // A chat this server does not hold has nothing in flight either: useChat({ resume: true })
    // asks for every chat it opens, a new one too, and would show a 404 as the chat's error.
    const run = chats.get(chatId)?.run;
    return run ? stream(run.events$, run.messageId) : new Response(null, { status: 204 });
  }

  function command(chatId: string, body: string): Response {
    const chat = isChatId(chatId) ? chats.get(chatId) : undefined;
    if (!chat) return refuse({ status: 404, message: `No chat "${chatId}" here.` });
    const refusal = runChatCommand(chat.agent, body);
    return refusal ? refuse(refusal) : new Response(null, { status: 204 });
  }

  function stream(events$: Observable<AgentEvent>, messageId: string, watch = (body: ReadableStream<Uint8Array>) => body): Response {
    const chunks = toUIMessageStream(events$, { ...options.chunks, messageId });
    return new Response(watch(toServerSentEvents(chunks)), { status: 200, headers: UI_MESSAGE_STREAM_HEADERS });
  }

  /** The chat's record, made on first use, or why there is none. */
  async function chatFor(chatId: string, request: Request): Promise<Chat | Refusal> {
    const existing = chats.get(chatId);
    if (existing) {
      // Map order is recency order for eviction.
      chats.delete(chatId);
      chats.set(chatId, existing);
      return existing;
    }
    const inFlight = pending.get(chatId);
    if (inFlight) return inFlight;
    if (chats.size + pending.size >= maxChats && !evictOne()) {
      return { status: 503, message: `The server holds ${maxChats} chats, each with a run going: try again later.` };
    }
    const creation = Promise.resolve()
      .then(() => options.createAgent(chatId, request))
      .then(
        (agent): Chat | Refusal => {
          if (!agent) return { status: 404, message: `No chat "${chatId}" here, and the server would not create it.` };
          const problem = problemOfAgent(agent);
          if (problem !== undefined) return { status: 500, message: `createAgent failed: it returned ${problem}.` };
          const chat: Chat = { agent, run: undefined };
          chats.set(chatId, chat);
          return chat;
        },
        (error: unknown): Refusal => ({ status: 500, message: `createAgent failed: ${errorText(error)}` }),
      );
    pending.set(chatId, creation);
    try {
      return await creation;
    } finally {
      pending.delete(chatId);
    }
  }

  function evictOne(): boolean {
    for (const [chatId, chat] of chats) {
      if (!chat.run && !chat.agent.state.isStreaming) {
        chats.delete(chatId);
        callDetached("onChatClose", options.onChatClose, [chatId, chat.agent], warn);
        return true;
      }
    }
    return false;
  }

  return {
    path,
    handles: (pathname) => route(pathname) !== undefined,
    fetch: (request) => answer(request).catch((error: unknown) => refuse({ status: 500, message: errorText(error) })),
    chatIds: () => [...chats.keys()],
    agent: (chatId) => chats.get(chatId)?.agent,
    async close() {
      closing = true;
      await Promise.all([...chats.values()].map((chat) => (chat.agent.abort(), chat.agent.waitForIdle())));
      for (const [chatId, chat] of chats) callDetached("onChatClose", options.onChatClose, [chatId, chat.agent], warn);
      chats.clear();
    },
  };
}

/**
 * A path's chat id, percent-decoded; one that is not valid percent-encoding stays as it came, which
 * no chat id is (`isChatId` refuses `%`). Why: `decodeURIComponent` throws on it, and `handles`
 * runs this from inside Node's HTTP parser (`handleNodeRequest`), where a throw ends the process.
 */
function decodedChatId(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

function refuse(refusal: Refusal, headers: Record<string, string> = {}): Response {
  return new Response(refusal.message, { status: refusal.status, headers: { "content-type": "text/plain; charset=utf-8", ...headers } });
}

/**
 * `stream` read through, calling `cancelled` when its reader cancels it and `ended` when it is
 * read to its end. A high-water mark of 0 reads nothing ahead: the reader's pace still reaches
 * `toUIMessageStream`'s allowance.
 */
function watchReader(stream: ReadableStream<Uint8Array>, on: { cancelled(): void; ended(): void }): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  return new ReadableStream<Uint8Array>(
    {
      pull: (controller) =>
        reader.read().then(({ done, value }) => {
          if (!done) return controller.enqueue(value);
          on.ended();
          controller.close();
        }),
      cancel: (reason: unknown) => {
        on.cancelled();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
