// The protocol's versions, apart from the frames' schemas: a client loads this without TypeBox.

/**
 * The protocol's version `serveAgents` speaks unless told otherwise (`protocol`); PROTOCOL.md says
 * what changed. A client that does not offer `PROTOCOL_3_SUBPROTOCOL` gets it rewritten into 2.
 */
export const PROTOCOL_VERSION = 3;

/** The protocol versions a server can speak; every client of this package reads both. */
export type ProtocolVersion = 2 | 3;

/**
 * The WebSocket subprotocol a client offers to say it reads protocol 3 (PROTOCOL.md). A server
 * of this package rewrites a protocol-3 session's frames into 2 for a client that did not offer
 * it; an older server, which selects the first subprotocol offered, speaks 2 as before.
 */
export const PROTOCOL_3_SUBPROTOCOL = "rxagent.3";

/** `protocol` when it is a version a server can speak, `fallback` when undefined; otherwise a TypeError naming `option`. */
export function protocolVersionOf(protocol: unknown, option: string, fallback: ProtocolVersion = PROTOCOL_VERSION): ProtocolVersion {
  if (protocol === undefined) return fallback;
  if (protocol === 2 || protocol === 3) return protocol;
  throw new TypeError(`${option} must be 2 or 3, got ${JSON.stringify(protocol) ?? String(protocol)}.`);
}
