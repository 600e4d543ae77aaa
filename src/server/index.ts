/** `rxagent/server` (Node only): serve agents over WebSocket (src/protocol/PROTOCOL.md), the browser UI, the JSON Lines transcript store. */

// Server
export { serveAgents } from "./server.js";
export type { AgentServer, ServeAgentsOptions, SessionInfo } from "./server.js";
export type { BackpressureOptions, ClientStats } from "./backpressure.js";
export type { EventLogOptions } from "./event-log.js";
export type { RateLimitOptions } from "./rate-limiter.js";
export { acceptToken, isLoopbackHost, pageOrigins, tokenOf } from "./verify-upgrade.js";
export { MemoryEventLog } from "./event-log.js";
export type { EventLog, LoggedFrame } from "./event-log.js";
export type { CommandReplies, HostedSession } from "./hosted-session.js";

// Browser UI
export { serveWebUi } from "./web-ui-server.js";
export type { ServeWebUiOptions, WebUiPage, WebUiServer } from "./web-ui-server.js";

// Protocol
export { ClientCommandSchema, parseClientFrame } from "../protocol/protocol-schemas.js";
export type {
  AckFrame,
  ArgumentText,
  ClientCommand,
  ClientCommandType,
  ErrorCode,
  ErrorFrame,
  EventFrame,
  FragmentFrame,
  MessagePatchOperation,
  ProtocolVersion,
  ServerFrame,
  SnapshotFrame,
  UpdateFrame,
  WireModelEvent,
  WirePromptInput,
} from "../protocol/protocol-schemas.js";

// Transcript store
export { DescriptorPool } from "./descriptor-pool.js";
export { JsonlTranscriptStore } from "./jsonl-transcript-store.js";
export type { JsonlTranscriptStoreOptions } from "./jsonl-transcript-store.js";
