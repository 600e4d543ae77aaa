import { Type } from "@sinclair/typebox";
import { expect } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { AgentMessage, TranscriptStore } from "../../src/types.js";

const echo = defineTool({ name: "echo", description: "Echoes", parameters: Type.Object({ text: Type.String() }), execute: (_id, { text }) => textResult(text) });
const clock = defineTool({ name: "clock", description: "Tells the time", parameters: Type.Object({}), execute: () => textResult("noon") });
const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 0 });

/**
 * A session whose settings `replaceState` changed (system prompt, thinking level, model, tools),
 * then whose transcript it replaced, then one more setting: reopened on the same store with
 * every model and tool given, it has the settings; given fewer, it says which are missing and
 * goes on. `settle` waits until the store has written everything (Redis acknowledges later).
 */
export async function expectSettingsReopened(openStore: () => TranscriptStore, settle: (store: TranscriptStore) => Promise<void>): Promise<void> {
  const store = openStore();
  const first = await Agent.open({ model: scriptedModel(["one"], { id: "a" }), systemPrompt: "original", tools: [echo, clock], store });
  await first.run("hello");
  const switched = scriptedModel(["two"], { id: "b" });
  first.replaceState({ systemPrompt: "be brief", thinkingLevel: "high", model: switched, tools: [clock] });
  await first.run("again");
  expect([switched.calls[0]?.systemPrompt, switched.thinkingLevels]).toStrictEqual(["be brief", ["high"]]);
  // A new transcript replaces the store's content: the settings so far must follow it.
  first.replaceState({ messages: [user("compacted")] });
  first.replaceState({ thinkingLevel: "low" });
  await settle(store);
  first.dispose();

  const fresh = scriptedModel([], { id: "a" });
  const freshSwitched = scriptedModel(["three"], { id: "b" });
  const warnings: string[] = [];
  const reopenedStore = openStore();
  const reopened = await Agent.open({ model: fresh, models: [freshSwitched], systemPrompt: "original", tools: [echo, clock], store: reopenedStore, onWarning: (text) => warnings.push(text) });
  const { systemPrompt, model, tools, thinkingLevel } = reopened.settings;
  expect([systemPrompt, model, tools?.map((tool) => tool.name), thinkingLevel, warnings]).toStrictEqual(["be brief", freshSwitched, ["clock"], "low", []]);
  await reopened.run("third");
  expect([freshSwitched.calls[0]?.systemPrompt, freshSwitched.calls[0]?.tools?.map((tool) => tool.name), freshSwitched.thinkingLevels, fresh.calls.length]).toStrictEqual([
    "be brief",
    ["clock"],
    ["low"],
    0,
  ]);
  await settle(reopenedStore);
  reopened.dispose();

  // The app no longer has the model or a tool the session switched to: it says so and goes on.
  const older = scriptedModel(["four"], { id: "a" });
  const lastStore = openStore();
  const missing = await Agent.open({ model: older, tools: [echo], store: lastStore, onWarning: (text) => warnings.push(text) });
  expect([missing.settings.model, missing.settings.tools, missing.settings.systemPrompt, warnings]).toStrictEqual([
    older,
    [],
    "be brief",
    [
      'The session switched to the model "scripted/b", which Agent.open was not given (model, models); it goes on with "scripted/a".',
      'The session\'s tools include "clock", which Agent.open was not given (tools); it goes on without it.',
    ],
  ]);
  await missing.run("fourth");
  expect([older.calls[0]?.tools, older.thinkingLevels, missing.messages.length]).toStrictEqual([undefined, ["low"], 5]);
  await settle(lastStore);
  missing.dispose();
}
