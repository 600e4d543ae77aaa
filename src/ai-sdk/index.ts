/**
 * `rxagent/ai-sdk`: an rxagent backend for the AI SDK's `useChat` (optional peer `ai` 5): a run's
 * events as UI message stream chunks, and a chat handler for the Fetch API and Node's HTTP server.
 */

// Chunks
export { toUIMessageChunks } from "./ui-message-chunks.js";
export type { RxagentDataParts, UIMessageChunkOptions } from "./ui-message-chunks.js";
export { SLOW_READER_TEXT, toServerSentEvents, toUIMessageStream, UI_MESSAGE_STREAM_HEADERS } from "./to-ui-message-stream.js";
export type { UIMessageStreamOptions } from "./to-ui-message-stream.js";

// Chat handler
export { createChatHandler } from "./chat-handler.js";
export type { ChatHandler, ChatHandlerOptions } from "./chat-handler.js";
export type { ChatCommand } from "./chat-commands.js";
export { handleNodeRequest } from "./node-handler.js";
