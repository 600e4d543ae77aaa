import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Progress, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { AgentTool, AgentToolResult, ToolExecutionContext } from "../types.js";
import { toResultContent } from "./mcp-content.js";
import { resultsAfterNotifications } from "./results-after-notifications.js";

/** How a server's tool becomes an rxagent tool. */
export interface McpToolSettings {
  /** The name the model sees (prefixed, made provider-safe). */
  name: string;
  /** Per-call time limit, as `AgentTool.timeoutMs`; also the SDK's request timeout. */
  timeoutMs?: number;
  /** The longest a call may last, progress or not (the SDK's `maxTotalTimeout`). Default: no bound. */
  maxCallMs?: number;
}

/** What `details` holds while a call reports progress. */
export interface McpProgressDetails {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * One MCP tool as an rxagent tool. Its JSON Schema is the server's `inputSchema`, validated by
 * the loop like any JSON Schema.
 *
 * A call sends `tools/call` with the run's signal: an abort (the run's, a timeout, steering)
 * makes the SDK send `notifications/cancelled` and the call ends with an error result. Progress
 * notifications become `tool_execution_update`s. A result with `isError` becomes an error result
 * (its text as the message); `structuredContent` becomes `details`. A server that dies mid-call
 * rejects the call, which becomes an error result: the run goes on.
 */
const SDK_TIMEOUT_MARGIN_MS = 1_000;

export function mcpTool(client: Client, tool: Tool, settings: McpToolSettings): AgentTool {
  const agentTool: AgentTool = {
    name: settings.name,
    label: tool.title ?? tool.annotations?.title ?? tool.name,
    description: tool.description ?? "",
    parameters: tool.inputSchema,
    execute: (_toolCallId, args, context: ToolExecutionContext) => {
      // The call's progress reaches `update` even when its last notifications come with the result.
      resultsAfterNotifications(client);
      return client
        .callTool({ name: tool.name, arguments: args as Record<string, unknown> }, undefined, {
          signal: context.signal,
          onprogress: (progress: Progress) => context.update(progressResult(progress)),
          // Progress shows the server is alive: its time limit starts again.
          resetTimeoutOnProgress: true,
          ...(settings.maxCallMs === undefined ? {} : { maxTotalTimeout: settings.maxCallMs }),
          // The loop's timer owns the limit (its result names the tool and cancels on the server); the
          // SDK's own timer, armed at the same moment, would race it, so it only backs it up.
          ...(settings.timeoutMs === undefined ? {} : { timeout: settings.timeoutMs + SDK_TIMEOUT_MARGIN_MS }),
        })
        .then((result) => toolResultOf(tool.name, result as CallToolResult));
    },
  };
  if (settings.timeoutMs !== undefined) agentTool.timeoutMs = settings.timeoutMs;
  return agentTool;
}

function toolResultOf(serverToolName: string, result: CallToolResult): AgentToolResult {
  const content = (result.content ?? []).map(toResultContent);
  if (result.isError) {
    const text = content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
    throw new Error(text === "" ? `MCP tool "${serverToolName}" failed without a message` : text);
  }
  return { content, details: result.structuredContent };
}

function progressResult(progress: Progress): AgentToolResult<McpProgressDetails> {
  const details: McpProgressDetails = { progress: progress.progress };
  if (progress.total !== undefined) details.total = progress.total;
  if (progress.message !== undefined) details.message = progress.message;
  const text = progress.message ?? (progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`);
  return { content: [{ type: "text", text }], details };
}
