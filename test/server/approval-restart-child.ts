/**
 * Child process for the restart test: runs an agent on a file store until its deploy call waits
 * for approval (the read call of the same batch has finished), says READY, and waits to be killed.
 */
import { JsonlTranscriptStore } from "../../src/server/index.js";
import { Agent } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { approvalBatch, approvalTools } from "./approval-restart-tools.js";

const path = process.argv[2];
if (!path) throw new Error("usage: approval-restart-child.ts <transcript.jsonl>");

const agent = new Agent({ model: scriptedModel([approvalBatch]), tools: approvalTools([]), store: new JsonlTranscriptStore(path) });
agent.events$.subscribe((event) => {
  if (event.type === "tool_execution_end" && event.toolCallId === "r1") process.stdout.write("READY\n");
});
agent.prompt("Ship it");
