/**
 * Child process for the crash test: runs an agent on a file store until its tool is running,
 * says READY, and waits to be killed.
 */
import { Type } from "@sinclair/typebox";
import { NEVER } from "rxjs";
import { Agent, defineTool } from "../../src/index.js";
import { JsonlTranscriptStore } from "../../src/server/index.js";
import { scriptedModel } from "../../src/testing/index.js";

const path = process.argv[2];
if (!path) throw new Error("usage: crash-child.ts <transcript.jsonl>");

const hang = defineTool({
  name: "hang",
  description: "Never finishes",
  parameters: Type.Object({}),
  execute: () => {
    process.stdout.write("READY\n");
    return NEVER;
  },
});
const model = scriptedModel([
  { content: [{ type: "text", text: "Working on it." }, { type: "toolCall", id: "call-hang", name: "hang", arguments: {} }] },
]);
const agent = new Agent({ model, tools: [hang], store: new JsonlTranscriptStore(path) });
agent.prompt("Please run the long job");
