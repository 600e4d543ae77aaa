// A crafted MCP server over stdio, newline-delimited JSON-RPC with no SDK: its one tool, "work",
// answers a call with three progress notifications and the result in a single write, so the
// client reads them all at once (test/mcp/results-after-notifications.test.ts).
import { createInterface } from "node:readline";

const write = (...messages) => process.stdout.write(messages.map((message) => `${JSON.stringify(message)}\n`).join(""));

createInterface({ input: process.stdin }).on("line", (line) => {
  const request = JSON.parse(line);
  if (request.id === undefined) return;
  switch (request.method) {
    case "initialize":
      write({ jsonrpc: "2.0", id: request.id, result: { protocolVersion: request.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "progress-with-result", version: "1.0.0" } } });
      return;
    case "tools/list":
      write({ jsonrpc: "2.0", id: request.id, result: { tools: [{ name: "work", inputSchema: { type: "object", properties: {} } }] } });
      return;
    case "tools/call": {
      const progressToken = request.params._meta?.progressToken;
      const progress = [1, 2, 3].map((step) => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken, progress: step, total: 3, message: `step ${step}` } }));
      write(...progress, { jsonrpc: "2.0", id: request.id, result: { content: [{ type: "text", text: "worked" }] } });
      return;
    }
    default:
      write({ jsonrpc: "2.0", id: request.id, error: { code: -32601, message: `no method ${request.method}` } });
  }
});
