/**
 * rxagent/mcp: the tools of MCP servers as rxagent tools, on the official
 * `@modelcontextprotocol/sdk` client (an optional peer: install it to use this entry point).
 */
export { mcpTools } from "./mcp-tools.js";
export type { McpToolsOptions } from "./mcp-tools.js";
export { mcpTool } from "./mcp-tool.js";
export type { McpProgressDetails, McpToolSettings } from "./mcp-tool.js";
export { toResultContent } from "./mcp-content.js";
