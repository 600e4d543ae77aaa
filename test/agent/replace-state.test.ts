import { describe, expect, it } from "vitest";
import { Type } from "@sinclair/typebox";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asyncScheduler } from "rxjs";
import { Agent, defineTool, InvalidConfigError, InvalidStateError, textResult } from "../../src/index.js";
import type { AgentMessage, AgentStatePatch, AssistantMessage, TranscriptStore } from "../../src/index.js";
import { JsonlTranscriptStore } from "../../src/server/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { expectSettingsReopened } from "../helpers/stored-settings-session.js";

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 0 });
const usage = { input: 7, output: 3, cacheRead: 0, cacheWrite: 0, totalTokens: 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (text: string): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "scripted",
  provider: "scripted",
  model: "scripted",
  usage,
  stopReason: "stop",
  timestamp: 1,
});
const echo = defineTool({ name: "echo", description: "Echoes", parameters: Type.Object({ text: Type.String() }), execute: (_id, { text }) => textResult(text) });
const userTexts = (messages: readonly AgentMessage[]): unknown[] => messages.filter((message) => message.role === "user").map((message) => message.content);

describe("Agent.replaceState: the transcript, system prompt, model and tools replaced between runs", () => {
  it("replaces the transcript with a copy: the next run starts from it, totals are counted again, queued messages stay", async () => {
    const model = scriptedModel(["first", "after the replace"]);
    const agent = new Agent({ model });
    await agent.run("hello");
    agent.followUp("queued");
    const compacted = [user("summary of before"), assistant("ok")];
    agent.replaceState({ messages: compacted });
    compacted.push(user("pushed after the replace"));
    expect(agent.messages).toStrictEqual([user("summary of before"), assistant("ok")]);
    expect(agent.state.usage.totalTokens).toBe(10);
    expect(agent.state.queuedFollowUp).toBe(1);
    expect(agent.hasQueuedMessages()).toBe(true);
    await agent.run("next");
    expect(userTexts(model.calls[1]?.messages ?? [])).toStrictEqual(["summary of before", "next"]);
    expect(userTexts(agent.messages)).toStrictEqual(["summary of before", "next", "queued"]);
  });

  it("replaces the system prompt, the model and the tools for the next run; fields left out stay", async () => {
    const before = scriptedModel(["one"]);
    const after = scriptedModel(["two", "three"]);
    const agent = new Agent({ model: before, systemPrompt: "old", tools: [] });
    await agent.run("hello");
    agent.replaceState({ systemPrompt: "new", model: after, tools: [echo] });
    await agent.run("again");
    expect([before.calls.length, after.calls[0]?.systemPrompt, after.calls[0]?.tools?.map((tool) => tool.name)]).toStrictEqual([1, "new", ["echo"]]);
    agent.replaceState({ messages: [] });
    await agent.run("third");
    expect([after.calls[1]?.systemPrompt, after.calls[1]?.messages.length]).toStrictEqual(["new", 1]);
    expect(agent.snapshot().systemPrompt).toBe("new");
  });

  it("is refused while a run is active, with a clear error; the run and the state go on unchanged", async () => {
    const agent = new Agent({ model: scriptedModel(["answer"], { scheduler: asyncScheduler, delay: 1 }) });
    const run = agent.run("hello");
    expect(() => agent.replaceState({ messages: [] })).toThrow(InvalidStateError);
    expect(() => agent.replaceState({ systemPrompt: "x" })).toThrow(
      "Cannot replace the agent's state while it is running: wait for the run to end (waitForIdle()), or abort() it first.",
    );
    expect(userTexts(await run)).toStrictEqual(["hello"]);
    expect(agent.messages).toHaveLength(2);
  });

  it("checks what it gets element by element, names the field, and changes nothing on bad input", async () => {
    const model = scriptedModel([]);
    const agent = new Agent({ model, systemPrompt: "kept", messages: [user("kept")] });
    const refused = (patch: unknown): InvalidConfigError => {
      try {
        agent.replaceState(patch as AgentStatePatch);
      } catch (error) {
        return error as InvalidConfigError;
      }
      throw new Error("accepted");
    };
    const cases: [unknown, string, RegExp][] = [
      [{ messages: [user("fine"), 42] }, "messages[1]", /Agent\.replaceState takes messages, but messages\[1\] is 42/],
      [{ messages: [{ role: "user", content: "no timestamp" }] }, "messages[0]", /has no timestamp/],
      [{ messages: "hello" }, "messages", /takes an array of messages/],
      [{ systemPrompt: 7 }, "systemPrompt", /must be a string, got number/],
      [{ model: {} }, "model", /needs a model with a stream\(\) method/],
      [{ tools: echo }, "tools", /must be an array of tools/],
      [{ tools: [echo, { ...echo }] }, "tools[1].name", /"echo" is also the name of tools\[0\]/],
      [{ tools: [{ name: "bare" }] }, "tools[0]", /must be a tool with an execute function/],
      [{ thinkingLevel: "extreme" }, "thinkingLevel", /must be one of "off", "minimal", "low", "medium", "high", "xhigh", got/],
      [{ temperature: 0.2 }, "temperature", /replaces messages, systemPrompt, model, tools and thinkingLevel, not temperature/],
      [null, "patch", /takes an object/],
    ];
    for (const [patch, field, text] of cases) {
      const error = refused(patch);
      expect(error).toBeInstanceOf(InvalidConfigError);
      expect([error.field, text.test(error.message)]).toStrictEqual([field, true]);
    }
    // A bad field anywhere refuses the whole patch.
    expect(() => agent.replaceState({ messages: [], systemPrompt: 7 as unknown as string })).toThrow(InvalidConfigError);
    expect([agent.messages, agent.snapshot().systemPrompt]).toStrictEqual([[user("kept")], "kept"]);
  });

  it("rewrites a JSONL store in one step: Agent.open reopens on the new transcript, and later messages follow it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rxagent-replace-")), "transcript.jsonl");
    const first = await Agent.open({ model: scriptedModel(["one"]), store: new JsonlTranscriptStore(path) });
    await first.run("hello");
    first.replaceState({ messages: [user("compacted"), assistant("noted")] });
    await first.run("go on");
    first.dispose();
    const lines = readFileSync(path, "utf8").split("\n").filter((line) => line !== "");
    expect(lines.map((line) => (JSON.parse(line) as { role: string }).role)).toStrictEqual(["user", "assistant", "user", "assistant"]);
    const reopened = await Agent.open({ model: scriptedModel([]), store: new JsonlTranscriptStore(path) });
    expect(userTexts(reopened.messages)).toStrictEqual(["compacted", "go on"]);
    expect(reopened.messages).toStrictEqual(first.messages);
  });

  it("falls back to clear and append for a store without replace; a store that throws leaves the agent unchanged", () => {
    const written: string[] = [];
    const plain: TranscriptStore = {
      load: () => Promise.resolve([]),
      append: (message) => void written.push(String((message as { content: unknown }).content)),
      clear: () => void written.push("<clear>"),
    };
    const agent = new Agent({ model: scriptedModel([]), store: plain, messages: [user("old")] });
    agent.replaceState({ messages: [user("a"), user("b")] });
    expect(written).toStrictEqual(["<clear>", "a", "b"]);
    const failing = new Agent({
      model: scriptedModel([]),
      messages: [user("old")],
      store: { ...plain, replace: () => { throw new Error("disk full"); } },
    });
    expect(() => failing.replaceState({ messages: [user("new")], systemPrompt: "new" })).toThrow("disk full");
    expect([failing.messages, failing.snapshot().systemPrompt]).toStrictEqual([[user("old")], undefined]);
  });
});

describe("Agent.replaceState with a JSONL store: the settings it changed outlive the process", () => {
  it("Agent.open applies the system prompt and thinking level kept, finds the model and tools by name, and says which it was not given", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rxagent-settings-")), "transcript.jsonl");
    await expectSettingsReopened(() => new JsonlTranscriptStore(path), () => Promise.resolve());
  });

  it("a later configure of a kept setting is kept too: Agent.open does not bring back the older value", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rxagent-settings-")), "transcript.jsonl");
    const first = await Agent.open({ model: scriptedModel(["one"]), systemPrompt: "original", store: new JsonlTranscriptStore(path) });
    first.replaceState({ systemPrompt: "be brief" });
    first.configure({ systemPrompt: "be thorough", thinkingLevel: "high" });
    await first.run("hello");
    first.dispose();
    const reopened = await Agent.open({ model: scriptedModel([]), systemPrompt: "original", store: new JsonlTranscriptStore(path) });
    // The thinking level was never kept (no replaceState changed it): the caller's, as before.
    expect([reopened.settings.systemPrompt, reopened.settings.thinkingLevel]).toStrictEqual(["be thorough", undefined]);
  });
});

describe("Agent.replaceState when the JSONL store cannot replace its file", () => {
  const opened = async (path: string, replies: string[]) => Agent.open({ model: scriptedModel(replies), systemPrompt: "old", store: new JsonlTranscriptStore(path) });

  it("the temporary file cannot be written (a directory stands at <file>.replacing): a clear error, the old transcript intact on disk and in memory, the agent goes on", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rxagent-replace-fails-")), "transcript.jsonl");
    const agent = await opened(path, ["one", "two"]);
    await agent.run("hello");
    const before = readFileSync(path, "utf8");
    mkdirSync(join(`${path}.replacing`, "someone else's"), { recursive: true });
    expect(() => agent.replaceState({ messages: [user("compacted")], systemPrompt: "new" })).toThrow(`${path}: could not replace the transcript: EISDIR`);
    expect([readFileSync(path, "utf8"), userTexts(agent.messages), agent.settings.systemPrompt, existsSync(join(`${path}.replacing`, "someone else's"))]).toStrictEqual([before, ["hello"], "old", true]);
    await agent.run("still here");
    agent.dispose();
    expect(userTexts((await opened(path, [])).messages)).toStrictEqual(["hello", "still here"]);
  });

  it("the rename fails (a directory took the file's place): a clear error, the transcript in memory intact, no temporary file left, the agent goes on", async () => {
    const folder = mkdtempSync(join(tmpdir(), "rxagent-replace-fails-"));
    const path = join(folder, "transcript.jsonl");
    const agent = await opened(path, ["one", "two"]);
    await agent.run("hello");
    const before = [...agent.messages];
    rmSync(path);
    mkdirSync(join(path, "in the way"), { recursive: true });
    expect(() => agent.replaceState({ messages: [user("compacted")] })).toThrow(`${path}: could not replace the transcript: EISDIR`);
    expect([agent.messages, readdirSync(folder)]).toStrictEqual([before, ["transcript.jsonl"]]);
    await agent.run("still here");
    expect(userTexts(agent.messages)).toStrictEqual(["hello", "still here"]);
  });
});
