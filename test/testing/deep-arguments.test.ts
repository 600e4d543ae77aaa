import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { agentLoop } from "../../src/streams/agent-loop.js";
import { cassetteModel, parseCassette, recordingModel, scriptedModel } from "../../src/testing/index.js";
import { cassetteFileSink, readCassette } from "../../src/testing/node/index.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { AgentEvent, Model } from "../../src/types.js";
import { deepArgumentsModel } from "../helpers/deep-json.js";
import { userMessage } from "./fixtures.js";

// Issue 27, item 1: the testing entry point must carry a crafted reply to the loop, and record
// and replay it, without overflowing the stack (JSON.stringify, structuredClone).

const echo = defineTool({ name: "echo", description: "Echoes", parameters: Type.Object({ items: Type.Array(Type.Unknown()) }), execute: () => ({ content: [{ type: "text", text: "echoed" }], details: {} }) });

/** `levels` nested arrays, built without recursion. */
function nested(levels: number): unknown[] {
  let value: unknown[] = [];
  for (let level = 1; level < levels; level++) value = [value];
  return value;
}

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function temporaryFile(name: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), "rxagent-deep-"));
  folders.push(folder);
  return path.join(folder, name);
}

async function toolResultText(model: Model): Promise<unknown> {
  const events = await lastValueFrom(agentLoop([userMessage("go")], { messages: [], tools: [echo] }, { model }).pipe(toArray()));
  expect(() => JSON.stringify(events)).not.toThrow();
  const end = events.find((event): event is Extract<AgentEvent, { type: "tool_execution_end" }> => event.type === "tool_execution_end");
  return end?.result.content;
}

const refused = [{ type: "text", text: 'Invalid arguments for tool "echo": arguments nest deeper than 128 levels.' }];

describe("arguments nested 6,000 deep in the testing tools", () => {
  it("scriptedModel streams them (no RangeError from its delta text) and the loop refuses them", async () => {
    const model = scriptedModel([{ content: [{ type: "toolCall", id: "call_1", name: "echo", arguments: { items: nested(6000) } }] }, "done"]);
    expect(await toolResultText(model)).toStrictEqual(refused);
  });

  it("recordingModel records them as the loop takes them, to a file, and the replay gets the same result", async () => {
    const file = temporaryFile("deep.cassette.jsonl");
    const sink = cassetteFileSink(file);
    const recorder = recordingModel(deepArgumentsModel("echo", 6000), { sink });
    expect(await toolResultText(recorder)).toStrictEqual(refused);
    sink.close();
    // The recorded call: empty arguments, and text one level past the deepest a run accepts.
    const toolCall = readCassette(file).calls[0]!.events.find((event) => event.event.type === "toolcall_end")!.event.toolCall as { arguments: unknown; rawArguments: string };
    expect(toolCall.arguments).toStrictEqual({});
    expect(toolCall.rawArguments).toBe("[".repeat(1001) + "]".repeat(1001));
    expect(await toolResultText(cassetteModel(readCassette(file)))).toStrictEqual(refused);
  });

  it("a cassette file crafted 6,000 deep is refused naming the line, before anything clones it", () => {
    const file = temporaryFile("crafted.cassette.jsonl");
    const header = JSON.stringify({ kind: "cassette", version: 1, model: { id: "m", provider: "p", api: "a" } });
    const call = JSON.stringify({ kind: "call", call: 0, request: { messages: [] } });
    const deep = `{"kind":"event","call":0,"at":0,"event":{"type":"start","x":${"[".repeat(6000)}${"]".repeat(6000)}}}`;
    writeFileSync(file, `${header}\n${call}\n${deep}\n${header}\n`);
    expect(() => readCassette(file)).toThrow(new SyntaxError("Cassette line 3 has values that nest deeper than 1016 levels; it was not recorded by rxagent."));
    expect(() => parseCassette(readFileSync(file, "utf8").split("\n")[2]!)).toThrow(/^Cassette text has values that nest deeper than 1016 levels/);
  });

  it("a cassette built in memory 6,000 deep is refused by cassetteModel before any replay clones it", () => {
    const start = { at: 0, event: { type: "start" as const, extra: nested(6000) } };
    const cassette = { version: 1 as const, model: { id: "m", provider: "p", api: "a" }, calls: [{ request: { messages: [] }, events: [start] }] };
    expect(() => cassetteModel(cassette)).toThrow(new SyntaxError("A cassette's calls have values that nest deeper than 1016 levels; it was not recorded by rxagent."));
  });
});
