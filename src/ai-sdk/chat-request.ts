/** What useChat's POST asks for, once checked: the chat and the text of its new user message. */
export interface ChatRequest {
  chatId: string;
  text: string;
}

/** A request the handler turns down, with the status and the message its client gets. */
export interface Refusal {
  status: number;
  message: string;
}

/** A chat id as the WebSocket protocol's session ids: safe in a URL, a log line and a file name. */
const CHAT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export function isChatId(value: unknown): value is string {
  return typeof value === "string" && CHAT_ID.test(value) && value !== "." && value !== "..";
}

/**
 * Reads a request body as text, refusing it once it passes `maxBytes` (before reading it all:
 * a huge body costs at most `maxBytes` of memory).
 */
export async function readBody(request: Request, maxBytes: number): Promise<string | Refusal> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) return tooLarge(maxBytes);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return tooLarge(maxBytes);
    }
    parts.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * Checks useChat's body (`{ id, messages, trigger }`) and takes the text of its last message.
 * The agent keeps the transcript itself, so the earlier messages the client sends are not read:
 * a client cannot rewrite the history the model sees.
 */
export function parseChatRequest(body: string): ChatRequest | Refusal {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { status: 400, message: "The body is not JSON: send useChat's { id, messages }." };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { status: 400, message: "The body must be a JSON object: useChat's { id, messages }." };
  const { id, messages, trigger } = parsed as { id?: unknown; messages?: unknown; trigger?: unknown };
  if (!isChatId(id)) return { status: 400, message: 'The chat "id" must be 1 to 128 characters of A-Z a-z 0-9 _ . : -' };
  if (trigger !== undefined && trigger !== "submit-message") {
    return { status: 400, message: `trigger ${triggerText(trigger)} is not supported: the agent keeps the transcript, so only new messages ("submit-message") can be sent.` };
  }
  if (!Array.isArray(messages) || messages.length === 0) return { status: 400, message: '"messages" must be a non-empty array of UI messages.' };
  const last: unknown = messages[messages.length - 1];
  const { role, parts } = (typeof last === "object" && last !== null ? last : {}) as { role?: unknown; parts?: unknown };
  if (role !== "user" || !Array.isArray(parts)) return { status: 400, message: "The last message must be a user message with parts." };
  const text = parts
    .flatMap((part: unknown) => {
      const { type, text: partText } = (typeof part === "object" && part !== null ? part : {}) as { type?: unknown; text?: unknown };
      return type === "text" && typeof partText === "string" ? [partText] : [];
    })
    .join("\n");
  if (text.trim() === "") return { status: 400, message: "The last user message has no text part." };
  return { chatId: id, text };
}

/**
 * How a refusal names the trigger a client sent: a short string quoted, anything else by its
 * type. Why not `String(trigger)`: an object from the body such as `{ "toString": 1 }` makes it
 * throw (the client got a 500), and a long string would be sent back whole.
 */
function triggerText(trigger: unknown): string {
  if (typeof trigger !== "string") return `of type ${trigger === null ? "null" : Array.isArray(trigger) ? "array" : typeof trigger}`;
  return trigger.length <= SHOWN_TRIGGER_LENGTH ? JSON.stringify(trigger) : `${JSON.stringify(trigger.slice(0, SHOWN_TRIGGER_LENGTH))}…`;
}

/** The longest trigger a refusal quotes whole. */
const SHOWN_TRIGGER_LENGTH = 64;

function tooLarge(maxBytes: number): Refusal {
  return { status: 413, message: `The body is larger than ${maxBytes} bytes.` };
}
