import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListToolsResultSchema, ToolListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { AgentTool } from "../types.js";
import { callDetached, warnToConsole } from "../util/detached-callback.js";
import { mcpTool } from "./mcp-tool.js";

export interface McpToolsOptions {
  /**
   * Put before each tool name, to tell servers apart.
   *
   * Contract: letters, digits, "_" or "-"; names are cut to 64 characters (what providers accept).
   * @example mcpTools(github, { prefix: "github_" }) // "create_issue" → "github_create_issue"
   */
  prefix?: string;
  /**
   * The array to keep the tools in, shared with your own tools and other servers: this server's
   * tools are added to it and, when its list changes, replaced in place. Default: a new array.
   *
   * Contract: hand this very array to the agent; entries of other owners are left where they are.
   */
  into?: AgentTool[];
  /**
   * Per-call time limit in ms (`AgentTool.timeoutMs`); the call is then cancelled on the server.
   *
   * Contract: positive. Default: the SDK's request timeout (60 s, restarted by each progress).
   */
  timeoutMs?: number;
  /**
   * How long one `tools/list` request may take, in ms; then the listing fails (at start-up
   * `mcpTools` rejects, a refresh keeps the old list). Default 30 000.
   */
  listTimeoutMs?: number;
  /**
   * Pages of `tools/list` followed before the listing fails as endless. Default 100.
   * Why a bound: a server that hands out a new `nextCursor` forever kept `serve` from starting
   * while memory grew (issue 27, row 9).
   */
  maxListPages?: number;
  /** Tools a server may list before the listing fails. Default 10 000. */
  maxTools?: number;
  /**
   * The longest a call may last however much progress it reports, in ms (the SDK's
   * `maxTotalTimeout`: progress restarts the per-call limit, not this one). Default 600 000.
   */
  maxCallMs?: number;
  /**
   * Told after each refresh of the list, or of why a refresh failed (the old list then stays).
   *
   * Contract: `tools` are this server's tools only; a throw or a rejection goes to `console.warn`
   * (it must not end the process).
   */
  onToolsChanged?: (tools: readonly AgentTool[], error?: unknown) => void;
}

/**
 * A connected MCP server's tools as rxagent tools, in a live array.
 *
 * Lists every page of the server's tools (following `nextCursor`), within bounds: a listing that
 * takes more than `maxListPages` pages, more than `maxTools` tools, or a page that takes longer
 * than `listTimeoutMs` fails with an error that says which. When the server announces
 * `notifications/tools/list_changed`, the list is fetched again and replaces this server's tools
 * in the array in place; since the loop reads its tools array at each model call, the new list
 * applies from the next model call. Pass the array itself as the agent's `tools` (or pass `into`
 * to share one array): a copy would not follow the changes. A tool whose name is already in the
 * array gets a numbered suffix.
 *
 * Takes over the client's `tools/list_changed` notification handler, and each call has the
 * client's transport hand responses on after the notifications read with them, so no progress
 * is lost (see `resultsAfterNotifications`). Lists with `tools/list` requests of its own, not
 * `client.listTools()`, so the SDK checks no tool's `outputSchema` (see `listAllTools`); a
 * `client.listTools()` of your own makes the SDK check them again.
 *
 * @example
 * const client = new Client({ name: "my-app", version: "1.0.0" });
 * await client.connect(new StdioClientTransport({ command: "npx", args: ["@modelcontextprotocol/server-everything"] }));
 * const tools = await mcpTools(client, { prefix: "everything_" });
 * const agent = new Agent({ model, tools });
 */
export async function mcpTools(client: Client, options: McpToolsOptions = {}): Promise<AgentTool[]> {
  const target = options.into ?? [];
  let current: AgentTool[] = [];
  const replace = (tools: Tool[]) => {
    const taken = new Set(target.filter((tool) => !current.includes(tool)).map((tool) => tool.name));
    const next = tools.map((tool) => {
      const name = uniqueName(`${options.prefix ?? ""}${tool.name}`, taken);
      taken.add(name);
      const settings = { name, maxCallMs: options.maxCallMs ?? defaultMaxCallMs };
      return mcpTool(client, tool, options.timeoutMs === undefined ? settings : { ...settings, timeoutMs: options.timeoutMs });
    });
    const at = current.length > 0 ? target.indexOf(current[0]!) : -1;
    for (const old of current) target.splice(target.indexOf(old), 1);
    target.splice(at === -1 ? target.length : at, 0, ...next);
    current = next;
  };
  const bounds: ListBounds = {
    timeoutMs: options.listTimeoutMs ?? defaultListTimeoutMs,
    maxPages: options.maxListPages ?? defaultMaxListPages,
    maxTools: options.maxTools ?? defaultMaxTools,
  };
  replace(await listAllTools(client, bounds));
  // One listing at a time, and one more once it ends if a change was announced meanwhile: every
  // announcement is followed by a listing that started after it, and a list applies as soon as
  // it is read. Why not a listing per announcement: a server announcing in a flood had that many
  // in flight, each holding its pages.
  let listing = false;
  let announcedSince = false;
  const refresh = (): void => {
    if (listing) {
      announcedSince = true;
      return;
    }
    listing = true;
    listAllTools(client, bounds)
      .then((tools) => {
        // Builds the whole new list before it touches the array: a tool that fails to convert leaves the old list.
        replace(tools);
        callDetached("onToolsChanged", options.onToolsChanged, [current], warnToConsole);
      })
      .catch((error: unknown) => callDetached("onToolsChanged", options.onToolsChanged, [current, error], warnToConsole))
      .finally(() => {
        listing = false;
        if (!announcedSince) return;
        announcedSince = false;
        refresh();
      });
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, refresh);
  return target;
}

const defaultListTimeoutMs = 30_000;
const defaultMaxListPages = 100;
const defaultMaxTools = 10_000;
const defaultMaxCallMs = 600_000;

interface ListBounds {
  timeoutMs: number;
  maxPages: number;
  maxTools: number;
}

/**
 * Every page of `tools/list`; a server that repeats a cursor ends the listing rather than looping,
 * and one that goes past the bounds fails it.
 */
async function listAllTools(client: Client, bounds: ListBounds): Promise<Tool[]> {
  const tools: Tool[] = [];
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  do {
    if (pages === bounds.maxPages) {
      throw new Error(`The MCP server listed more than ${bounds.maxPages} pages of tools (it keeps sending a new nextCursor); raise maxListPages if it really has that many.`);
    }
    // Not `client.listTools`: it compiles every tool's `outputSchema` with the SDK's own Ajv, whose
    // patterns are native regular expressions (a server's `^(a+)+$` checked against 26 characters
    // of structured content held the process 3.4 s, and each more character doubles it), and
    // which keeps every schema it compiled, listing after listing. Structured content passes
    // unchecked into `details`, as a tool's details always do.
    const page = await client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, ListToolsResultSchema, { timeout: bounds.timeoutMs });
    pages++;
    tools.push(...page.tools);
    if (tools.length > bounds.maxTools) {
      throw new Error(`The MCP server listed more than ${bounds.maxTools} tools; raise maxTools if it really has that many.`);
    }
    cursor = page.nextCursor;
    if (cursor !== undefined && seenCursors.has(cursor)) break;
    if (cursor !== undefined) seenCursors.add(cursor);
  } while (cursor !== undefined);
  return tools;
}

/** A provider-safe name (1 to 64 of letters, digits, "_", "-") not in `taken`. */
function uniqueName(wanted: string, taken: ReadonlySet<string>): string {
  const safe = wanted.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "tool";
  let name = safe;
  for (let suffix = 2; taken.has(name); suffix++) name = `${safe.slice(0, 64 - String(suffix).length - 1)}_${suffix}`;
  return name;
}
