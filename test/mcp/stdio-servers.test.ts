import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { lastValueFrom, tap, toArray } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { mcpTools } from "../../src/mcp/index.js";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { assertEventGrammar } from "../../src/testing/event-grammar.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import type { AgentEvent, ToolResultMessage } from "../../src/types.js";
import { userMessage } from "../testing/fixtures.js";
import { binOf, type Connection, connectStdio } from "./servers.js";

const open: Connection[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((connection) => connection.close()));
});

function toolResults(events: AgentEvent[]): ToolResultMessage[] {
  return events.flatMap((event) => (event.type === "message_end" && event.message.role === "toolResult" ? [event.message as ToolResultMessage] : []));
}

function texts(result: ToolResultMessage | undefined): string {
  return (result?.content ?? []).map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
}

describe("MCP servers over stdio", () => {
  it("server-filesystem on a temporary folder: the agent writes, lists and reads files; a path outside is refused", async () => {
    const folder = await mkdtemp(path.join(tmpdir(), "rxagent-mcp-"));
    try {
      await writeFile(path.join(folder, "notes.txt"), "first line\n");
      const connection = await connectStdio(process.execPath, [binOf("@modelcontextprotocol/server-filesystem", "mcp-server-filesystem"), folder]);
      open.push(connection);
      const tools = await mcpTools(connection.client, { prefix: "fs_" });
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["fs_read_text_file", "fs_write_file", "fs_list_directory"]));
      const model = scriptedModel([
        {
          content: [
            { type: "toolCall", name: "fs_write_file", arguments: { path: path.join(folder, "answer.txt"), content: "42" } },
            { type: "toolCall", name: "fs_read_text_file", arguments: { path: path.join(folder, "notes.txt") } },
            { type: "toolCall", name: "fs_read_text_file", arguments: { path: "/etc/hostname" } },
          ],
        },
        { content: [{ type: "toolCall", name: "fs_list_directory", arguments: { path: folder } }] },
        "done",
      ]);
      const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools }, { model }).pipe(toArray()));
      assertEventGrammar(events);
      const [written, read, outside, listed] = toolResults(events);
      expect(written!.isError).toBe(false);
      expect(await readFile(path.join(folder, "answer.txt"), "utf8")).toBe("42");
      expect(read).toMatchObject({ isError: false, content: [{ type: "text", text: "first line\n" }] });
      expect(outside!.isError).toBe(true);
      expect(texts(outside)).toMatch(/Access denied/);
      expect(texts(listed).split("\n").sort()).toStrictEqual(["[FILE] answer.txt", "[FILE] notes.txt"]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }, 30_000);

  it("a server that dies mid-call gives that call an error result; the run goes on and later calls fail cleanly", async () => {
    const connection = await connectStdio(process.execPath, [binOf("@modelcontextprotocol/server-everything", "mcp-server-everything"), "stdio"]);
    open.push(connection);
    const tools = await mcpTools(connection.client);
    const model = scriptedModel([
      { content: [{ type: "toolCall", name: "trigger-long-running-operation", arguments: { duration: 20, steps: 20 } }] },
      { content: [{ type: "toolCall", name: "echo", arguments: { message: "still there?" } }] },
      "done",
    ]);
    const events = await lastValueFrom(
      agentLoop([userMessage("go")], { messages: [], tools }, { model }).pipe(
        // Kill the server while the long call runs (its first progress shows it is running).
        tap((event) => {
          if (event.type === "tool_execution_update" && event.toolName === "trigger-long-running-operation") connection.process!.kill("SIGKILL");
        }),
        toArray(),
      ),
    );
    assertEventGrammar(events);
    const [died, after] = toolResults(events);
    expect(died).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringMatching(/Connection closed/) }] });
    expect(after).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringMatching(/Not connected/) }] });
    expect(model.calls.length).toBe(3);
    expect(events.at(-1)?.type).toBe("agent_end");
  }, 30_000);
});
