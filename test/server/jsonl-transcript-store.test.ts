import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastValueFrom, toArray } from "rxjs";
import { Agent } from "../../src/index.js";
import { JsonlTranscriptStore } from "../../src/server/index.js";
import type { AgentMessage } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 0 });

function temporaryFile(): string {
  return join(mkdtempSync(join(tmpdir(), "rxagent-store-")), "transcript.jsonl");
}

describe("JsonlTranscriptStore", () => {
  it("appends one line per message and loads them back", async () => {
    const path = temporaryFile();
    const store = new JsonlTranscriptStore(path);
    store.append(user("a"));
    store.append(user("b"));
    store.close();
    expect(readFileSync(path, "utf8")).toBe(`${JSON.stringify(user("a"))}\n${JSON.stringify(user("b"))}\n`);
    expect(await new JsonlTranscriptStore(path).load()).toStrictEqual([user("a"), user("b")]);
  });

  it("replace makes the messages the whole file through a rename, records included, and appends follow it", async () => {
    const path = temporaryFile();
    const store = new JsonlTranscriptStore(path, { fsync: true });
    store.append(user("a"));
    store.record({ type: "approval_settled", toolCallId: "c1" });
    store.replace([user("x"), user("y")]);
    store.append(user("z"));
    store.close();
    expect(readFileSync(path, "utf8")).toBe([user("x"), user("y"), user("z")].map((message) => `${JSON.stringify(message)}\n`).join(""));
    expect(existsSync(`${path}.replacing`)).toBe(false);
    expect(await new JsonlTranscriptStore(path).loadTranscript()).toStrictEqual({ messages: [user("x"), user("y"), user("z")], records: [] });
  });

  it("skips a torn last line with a warning and cuts it before the next append", async () => {
    const path = temporaryFile();
    writeFileSync(path, `${JSON.stringify(user("a"))}\n{"role":"us`);
    const warnings: string[] = [];
    const store = new JsonlTranscriptStore(path, { onWarning: (message) => warnings.push(message) });
    expect(await store.load()).toStrictEqual([user("a")]);
    expect(warnings).toStrictEqual([`${path}:2: skipped a line that is not valid JSON (torn last line, cut off).`]);
    store.append(user("b"));
    store.close();
    expect(await new JsonlTranscriptStore(path).load()).toStrictEqual([user("a"), user("b")]);
  });

  // Found by random files given to Agent.open: "{}" loaded as the transcript's message, and every
  // later step read a message without a role.
  it("skips, with a warning naming the line, JSON that is not a message or nests too deep, and an Agent opens on the rest", async () => {
    const path = temporaryFile();
    const deep = `{"role":"user","content":[{"type":"text","text":"x","extra":${"[".repeat(300)}${"]".repeat(300)}}],"timestamp":0}`;
    const lines = ["{}", "5", '"text"', "[1]", '{"role":"user","content":"no timestamp"}', '{"role":"user","content":7,"timestamp":0}', deep, JSON.stringify(user("kept"))];
    writeFileSync(path, `${lines.join("\n")}\n`);
    const warnings: string[] = [];
    const agent = await Agent.open({ model: scriptedModel(["answer"]), store: new JsonlTranscriptStore(path, { onWarning: (message) => warnings.push(message) }) });
    expect(agent.messages).toStrictEqual([user("kept")]);
    expect(warnings).toStrictEqual([
      `${path}:1: skipped a line that is not a message: it has no role (role: undefined).`,
      `${path}:2: skipped a line that is not a message: it is 5.`,
      `${path}:3: skipped a line that is not a message: it is "text".`,
      `${path}:4: skipped a line that is not a message: it is an array.`,
      `${path}:5: skipped a line that is not a message: it has no timestamp number (timestamp: undefined).`,
      `${path}:6: skipped a line that is not a message: it (role "user") has content 7, not a string or an array of blocks.`,
      `${path}:7: skipped a line that is not a message: it has values that nest deeper than 128 levels.`,
    ]);
    const events = await lastValueFrom(agent.prompt("go").pipe(toArray()));
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "idle" });
  });

  it("cuts a torn last line longer than the 64 KiB it reads at a time whole, so the next message keeps a line of its own", async () => {
    const path = temporaryFile();
    writeFileSync(path, `${JSON.stringify(user("a"))}\n{"role":"user","content":"${"x".repeat(200_000)}`);
    const store = new JsonlTranscriptStore(path, { onWarning: () => undefined });
    store.append(user("b"));
    store.close();
    expect(readFileSync(path, "utf8")).toBe(`${JSON.stringify(user("a"))}\n${JSON.stringify(user("b"))}\n`);
    expect(await new JsonlTranscriptStore(path).load()).toStrictEqual([user("a"), user("b")]);
  });

  it("skips a corrupt line in the middle and keeps the rest", async () => {
    const path = temporaryFile();
    writeFileSync(path, `${JSON.stringify(user("a"))}\nnot json\n${JSON.stringify(user("c"))}\n`);
    const warnings: string[] = [];
    expect(await new JsonlTranscriptStore(path, { onWarning: (message) => warnings.push(message) }).load()).toStrictEqual([user("a"), user("c")]);
    expect(warnings).toHaveLength(1);
  });

  // A FIFO where the transcript should be: load waited for a writer forever on one of libuv's
  // four pool threads (four such sessions stalled every file operation of the process, and its
  // exit), and append wrote the message into the pipe, where it was lost.
  it("refuses a FIFO or a folder where the transcript should be, at once, with an error that says so", async () => {
    const folder = mkdtempSync(join(tmpdir(), "rxagent-store-"));
    const fifo = join(folder, "fifo.jsonl");
    execFileSync("mkfifo", [fifo]);
    const notFile = `${fifo}: not a regular file (a FIFO, a device or a socket) is where the transcript should be; a transcript is a file of JSON lines.`;
    const waited = new Promise<string>((resolve) => setTimeout(() => resolve("still waiting after 10 s"), 10_000).unref());
    const loaded = new JsonlTranscriptStore(fifo).load().then(
      () => "loaded",
      (error: Error) => error.message,
    );
    expect(await Promise.race([loaded, waited])).toBe(notFile);
    expect(() => new JsonlTranscriptStore(fifo).append(user("kept"))).toThrow(notFile);
    const directory = join(folder, "folder.jsonl");
    mkdirSync(directory);
    await expect(new JsonlTranscriptStore(directory).load()).rejects.toThrow(`${directory}: a folder is where the transcript should be`);
  });

  it("returns an empty transcript for a missing file", async () => {
    expect(await new JsonlTranscriptStore(temporaryFile()).load()).toStrictEqual([]);
  });

  it("backs an Agent: every ended message is written as it ends, and Agent.open picks them up", async () => {
    const path = temporaryFile();
    const agent = new Agent({ model: scriptedModel(["hello back"]), store: new JsonlTranscriptStore(path) });
    const linesAtAssistantEnd: number[] = [];
    agent.events$.subscribe((event) => {
      if (event.type === "message_end") linesAtAssistantEnd.push(readFileSync(path, "utf8").split("\n").length - 1);
    });
    await lastValueFrom(agent.prompt("hello").pipe(toArray()));
    expect(linesAtAssistantEnd).toStrictEqual([1, 2]);
    const reopened = await Agent.open({ model: scriptedModel([]), store: new JsonlTranscriptStore(path) });
    expect(reopened.messages).toStrictEqual(agent.messages);
    appendFileSync(path, "");
  });

  it("keeps a complete last line that lacks its newline: load returns it, and the next append keeps it", async () => {
    const path = temporaryFile();
    writeFileSync(path, `${JSON.stringify(user("a"))}\n${JSON.stringify(user("b"))}`);
    const warnings: string[] = [];
    const store = new JsonlTranscriptStore(path, { onWarning: (message) => warnings.push(message) });
    expect(await store.load()).toStrictEqual([user("a"), user("b")]);
    store.append(user("c"));
    store.close();
    expect(readFileSync(path, "utf8")).toBe(`${JSON.stringify(user("a"))}\n${JSON.stringify(user("b"))}\n${JSON.stringify(user("c"))}\n`);
    expect(await new JsonlTranscriptStore(path).load()).toStrictEqual([user("a"), user("b"), user("c")]);
    expect(warnings).toStrictEqual([]);
  });

  // The append threw the toJSON's error: the tool result never reached the file.
  it("stores details whose toJSON throws with a note of why in its place, so no tool result goes missing", async () => {
    const path = temporaryFile();
    const unwritable = {
      toJSON() {
        throw new Error("not today");
      },
    };
    const result: AgentMessage = { role: "toolResult", toolCallId: "c1", toolName: "count", content: [{ type: "text", text: "counted" }], details: { unwritable, kept: 1 }, isError: false, timestamp: 0 };
    const store = new JsonlTranscriptStore(path, { onWarning: () => undefined });
    store.append(result);
    store.close();
    expect(await new JsonlTranscriptStore(path).load()).toStrictEqual([{ ...result, details: { unwritable: "[unwritable: not today]", kept: 1 } }]);
  });

  it("stores details JSON refuses (a BigInt, a cycle) in a safe form with a warning, so no tool result goes missing", async () => {
    const path = temporaryFile();
    const cycle: Record<string, unknown> = { name: "node" };
    cycle["self"] = cycle;
    const shared = { n: 1 };
    const result: AgentMessage = {
      role: "toolResult",
      toolCallId: "c1",
      toolName: "count",
      content: [{ type: "text", text: "counted" }],
      details: { total: 12345678901234567890n, cycle, twice: [shared, shared] },
      isError: false,
      timestamp: 0,
    };
    const warnings: string[] = [];
    const store = new JsonlTranscriptStore(path, { onWarning: (message) => warnings.push(message) });
    store.append(user("count"));
    store.append(result);
    store.close();
    expect(await new JsonlTranscriptStore(path).load()).toStrictEqual([
      user("count"),
      { ...result, details: { total: "12345678901234567890", cycle: { name: "node", self: "[Circular]" }, twice: [{ n: 1 }, { n: 1 }] } },
    ]);
    expect(warnings).toStrictEqual([`${path}: a message held values JSON cannot store (a BigInt, a cycle, a toJSON that throws); stored them in a safe form.`]);
  });

  it("keeps records on lines of their own: load skips them, loadTranscript returns those after the last assistant message, a malformed or torn one is skipped with a warning", async () => {
    const path = temporaryFile();
    const store = new JsonlTranscriptStore(path);
    const assistant = { role: "assistant", content: [], api: "x", provider: "x", model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "toolUse", timestamp: 1 } as AgentMessage;
    store.append(user("a"));
    store.record({ type: "approval_settled", toolCallId: "old" });
    store.append(assistant);
    store.record({ type: "approval_pending", approval: { toolCallId: "c1", toolName: "deploy", args: { target: "prod" }, since: 5 } });
    // A result of the same batch does not close it.
    const result = { role: "toolResult", toolCallId: "c0", toolName: "read", content: [], isError: false, timestamp: 2 } as AgentMessage;
    store.append(result);
    store.close();
    appendFileSync(path, `${JSON.stringify({ rxagent: { type: "approval_pending", approval: { toolCallId: 7 } } })}\n{"rxagent":{"type":"appr`);
    const warnings: string[] = [];
    const reopened = new JsonlTranscriptStore(path, { onWarning: (message) => warnings.push(message) });
    expect(await reopened.loadTranscript()).toStrictEqual({
      messages: [user("a"), assistant, result],
      records: [{ type: "approval_pending", approval: { toolCallId: "c1", toolName: "deploy", args: { target: "prod" }, since: 5 } }],
    });
    expect(warnings).toStrictEqual([
      `${path}:6: skipped a record that is not one rxagent writes: {"rxagent":{"type":"approval_pending","approval":{"toolCallId":7}}}`,
      `${path}:7: skipped a line that is not valid JSON (torn last line, cut off).`,
    ]);
    // The torn record is cut before the next line, as a torn message is.
    reopened.record({ type: "approval_settled", toolCallId: "c1" });
    reopened.close();
    expect((await new JsonlTranscriptStore(path, { onWarning: () => undefined }).loadTranscript()).records).toStrictEqual([
      { type: "approval_pending", approval: { toolCallId: "c1", toolName: "deploy", args: { target: "prod" }, since: 5 } },
      { type: "approval_settled", toolCallId: "c1" },
    ]);
    expect(await new JsonlTranscriptStore(path, { onWarning: () => undefined }).load()).toStrictEqual([user("a"), assistant, result]);
  });

  it("keeps settings records past every batch, merged field by field in order; a malformed one is skipped with a warning", async () => {
    const path = temporaryFile();
    const store = new JsonlTranscriptStore(path);
    store.record({ type: "settings", settings: { systemPrompt: "one", thinkingLevel: "high" } });
    store.append(user("a"));
    store.record({ type: "settings", settings: { thinkingLevel: "low", tools: ["read"] } });
    store.append(user("b"));
    store.replace([user("x")], [{ type: "settings", settings: { systemPrompt: "kept", model: { provider: "openai", id: "gpt" } } }]);
    store.close();
    appendFileSync(path, `${JSON.stringify({ rxagent: { type: "settings", settings: { thinkingLevel: "extreme", systemPrompt: "lost" } } })}\n`);
    const warnings: string[] = [];
    expect(await new JsonlTranscriptStore(path, { onWarning: (message) => warnings.push(message) }).loadTranscript()).toStrictEqual({
      messages: [user("x")],
      records: [],
      settings: { systemPrompt: "kept", model: { provider: "openai", id: "gpt" } },
    });
    expect(warnings).toStrictEqual([`${path}:3: skipped a record that is not one rxagent writes: {"rxagent":{"type":"settings","settings":{"thinkingLevel":"extreme","systemPrompt":"lost"}}}`]);
    writeFileSync(path, [user("a"), { rxagent: { type: "settings", settings: { systemPrompt: "one", thinkingLevel: "high" } } }, user("b"), { rxagent: { type: "settings", settings: { thinkingLevel: "low" } } }].map((line) => `${JSON.stringify(line)}\n`).join(""));
    expect((await new JsonlTranscriptStore(path).loadTranscript()).settings).toStrictEqual({ systemPrompt: "one", thinkingLevel: "low" });
  });
});
