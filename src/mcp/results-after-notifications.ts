import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { errorText } from "../util/error-text.js";

// The transports whose messages already pass through `resultsAfterNotifications`.
const reordered = new WeakSet<Transport>();

/**
 * Makes the client's transport hand each response to the client a microtask after it arrives,
 * so that the notifications that came before it in the same read are dispatched first. Every
 * other message is handed on at once, as before. Safe to call before each request: a transport
 * is wrapped once, and one the client replaced (a reconnect) is wrapped when next called.
 *
 * Why: the MCP SDK (1.32) dispatches a notification a microtask after reading it, but settles a
 * call as soon as it reads the call's result, and drops the call's progress handler then. When a
 * server's last progress notifications and its result reach the client in one read (a stdio
 * chunk, a busy client), every one of those notifications was dropped: the tool showed no
 * progress at all (test/mcp/results-after-notifications.test.ts). A microtask queued when the response
 * arrives runs after the notifications' own, queued when they arrived.
 *
 * What a handed-on response throws goes to the transport's `onerror`, as a throw from
 * `onmessage` does inside the SDK's own read loops: from a microtask it would end the process.
 */
export function resultsAfterNotifications(client: Client): void {
  const transport = client.transport;
  const onmessage = transport?.onmessage;
  if (transport === undefined || onmessage === undefined || reordered.has(transport)) return;
  reordered.add(transport);
  transport.onmessage = (message, extra) => {
    if (!isResponse(message)) {
      onmessage.call(transport, message, extra);
      return;
    }
    queueMicrotask(() => {
      try {
        onmessage.call(transport, message, extra);
      } catch (error) {
        transport.onerror?.(asError(error));
      }
    });
  };
}

/**
 * What was thrown, as an Error for `onerror`. Why not `String(error)`: a value whose `toString`
 * throws (or a revoked Proxy, which `instanceof` throws on) would throw again here, in a
 * microtask, where a throw ends the process.
 */
function asError(error: unknown): Error {
  try {
    if (error instanceof Error) return error;
  } catch {
    // A revoked Proxy: written as text below.
  }
  return new Error(errorText(error));
}

/** A JSON-RPC response (a result or an error): an `id` and no `method`. */
function isResponse(message: JSONRPCMessage): boolean {
  return typeof message === "object" && message !== null && "id" in message && !("method" in message);
}
