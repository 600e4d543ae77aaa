/** The WebSocket bridge: serve agents to Node and browser clients (PROTOCOL.md). */

// Server
export { serveAgents } from "./server.js";
export type { AgentServer, ServeAgentsOptions, SessionInfo } from "./server.js";
export type { BackpressureOptions, ClientStats } from "./client-connection.js";
export type { EventLogOptions } from "./session-hub.js";
export type { RateLimitOptions } from "./rate-limiter.js";
export { tokenOf } from "./verify-upgrade.js";

// Browser UI
export { serveWebUi } from "./web-ui-server.js";
export type { ServeWebUiOptions, WebUiServer } from "./web-ui-server.js";

// Client
export { connectAgent, RemoteCommandError } from "./client.js";
export type { AgentClient, ConnectAgentOptions, ConnectionStatus, WebSocketConstructor, WebSocketLike } from "./client.js";

// Protocol
export { ClientCommandSchema, parseClientFrame } from "./protocol-schemas.js";
export type {
  AckFrame,
  ClientCommand,
  ClientCommandType,
  ErrorCode,
  ErrorFrame,
  EventFrame,
  ServerFrame,
  SnapshotFrame,
  WirePromptInput,
} from "./protocol-schemas.js";
