import { PassThrough } from "node:stream";
import { Type } from "@sinclair/typebox";
import { asyncScheduler } from "rxjs";
import { describe, expect, it } from "vitest";
import { runChat } from "../../src/cli/chat-command.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { agentTool } from "../../src/agents/agent-tool.js";
import type { AgentEvent, AgentTool, Model, ToolResultMessage } from "../../src/types.js";
import { waitFor } from "../server/helpers.js";

const deploy = defineTool({
  name: "deploy",
  description: "Deploys",
  parameters: Type.Object({ target: Type.String() }),
  needsApproval: true,
  execute: (_id, { target }) => textResult(`deployed to ${target}`),
});

/** Runs the chat in this process on a scripted model (default: two deploys), answered by what the test types. */
function startChat(setup?: { model: Model; tools: AgentTool[] }) {
  const input = new PassThrough();
  const output = new PassThrough();
  const errorOutput = new PassThrough();
  let stdout = "";
  let stderr = "";
  output.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  errorOutput.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const model = setup?.model ?? scriptedModel(
    [
      {
        content: [
          { type: "toolCall", id: "d1", name: "deploy", arguments: { target: "staging" } },
          { type: "toolCall", id: "d2", name: "deploy", arguments: { target: "prod" } },
        ],
      },
      "Done.",
    ],
    { scheduler: asyncScheduler, delay: 1 },
  );
  const exited = runChat({
    choice: { model, description: "a scripted model", isDemo: false },
    root: process.cwd(),
    json: true,
    toolStepDelay: 0,
    input,
    output,
    errorOutput,
    color: false,
    tools: setup?.tools ?? [deploy],
  });
  const events = () => stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as AgentEvent);
  return { input, exited, events, stderr: () => stderr };
}

describe("rxagent chat approvals", () => {
  it("asks inline for each call waiting for approval; y runs the oldest, n denies the next", async () => {
    const chat = startChat();
    chat.input.write("deploy everywhere\n");
    await waitFor(() => chat.stderr().includes('? deploy {"target":"prod"} needs your approval'), "both questions");
    expect(chat.stderr()).toContain('? deploy {"target":"staging"} needs your approval: type y to run it, n to deny it.');
    chat.input.write("y\n");
    chat.input.end("n\n");
    expect(await chat.exited).toBe(0);
    const results = chat
      .events()
      .filter((event): event is Extract<AgentEvent, { type: "message_end" }> => event.type === "message_end")
      .map((event) => event.message)
      .filter((message): message is ToolResultMessage => (message as { role: string }).role === "toolResult");
    expect(results.map((result) => [result.toolCallId, result.isError, result.content])).toStrictEqual([
      ["d1", false, [{ type: "text", text: "deployed to staging" }]],
      ["d2", true, [{ type: "text", text: "Tool call was denied: denied in the chat" }]],
    ]);
    // The y and n were answers, not steering.
    expect(chat.events().filter((event) => event.type === "message_end" && (event.message as { role: string }).role === "user")).toHaveLength(1);
  });

  it("asks for a sub-agent's call waiting for approval as for its own, and y runs it inside the sub-agent", async () => {
    const researcher = agentTool({
      name: "researcher",
      description: "Deploys after looking",
      tools: [deploy],
      model: scriptedModel([{ content: [{ type: "toolCall", id: "n1", name: "deploy", arguments: { target: "staging" } }] }, "Deployed it."], { scheduler: asyncScheduler, delay: 1 }),
    });
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "r1", name: "researcher", arguments: { task: "deploy" } }] }, "Done."], { scheduler: asyncScheduler, delay: 1 });
    const chat = startChat({ model, tools: [researcher] });
    chat.input.write("research and deploy\n");
    await waitFor(() => chat.stderr().includes('? deploy {"target":"staging"} needs your approval: type y to run it, n to deny it.'), "the sub-agent's question");
    chat.input.end("y\n");
    expect(await chat.exited).toBe(0);
    const end = chat.events().find((event): event is Extract<AgentEvent, { type: "tool_execution_end" }> => event.type === "tool_execution_end");
    expect([end?.toolCallId, end?.isError, end?.result.content]).toStrictEqual(["r1", false, [{ type: "text", text: "Deployed it." }]]);
  });
});
