/** `rxagent/client`: connect to a served agent from a browser (its global WebSocket) or from Node (`ws`). */
export { connectAgent, RemoteCommandError } from "./client.js";
export type { AgentClient, ConnectAgentOptions, ConnectionStatus, WebSocketConstructor, WebSocketLike } from "./client.js";
export type {
  AckFrame,
  ArgumentText,
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
