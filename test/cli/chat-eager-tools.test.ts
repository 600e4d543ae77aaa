import { PassThrough } from "node:stream";
import { Type } from "@sinclair/typebox";
import { asyncScheduler, tap } from "rxjs";
import { describe, expect, it } from "vitest";
import { runChat } from "../../src/cli/chat-command.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import type { Model } from "../../src/types.js";

/**
 * Runs the chat in this process on a scripted model that asks for one `look` call and then
 * writes more text; returns, per call of the tool, whether the model's message had ended when it ran.
 */
async function messageEndedAtEachCall(eagerTools: boolean): Promise<boolean[]> {
  let messageEnded = false;
  const scripted = scriptedModel(
    [{ content: [{ type: "toolCall", id: "l1", name: "look", arguments: {} }, { type: "text", text: "and some more words" }] }, "Done."],
    { scheduler: asyncScheduler, delay: 1 },
  );
  const model: Model = {
    ...scripted,
    stream: (context, options) => scripted.stream(context, options).pipe(tap((event) => (messageEnded = event.type === "done" || event.type === "error"))),
  };
  const seen: boolean[] = [];
  const look = defineTool({
    name: "look",
    description: "Looks",
    parameters: Type.Object({}),
    execute: () => {
      seen.push(messageEnded);
      return textResult("seen");
    },
  });
  const input = new PassThrough();
  const exited = runChat({
    choice: { model, description: "a scripted model", isDemo: false },
    root: process.cwd(),
    json: true,
    toolStepDelay: 0,
    input,
    output: new PassThrough().resume(),
    errorOutput: new PassThrough().resume(),
    color: false,
    tools: [look],
    eagerTools,
  });
  input.end("look around\n");
  expect(await exited).toBe(0);
  return seen;
}

describe("rxagent chat --eager-tools", () => {
  it("starts the call while the model still writes its message; without the flag, after the message", async () => {
    expect(await messageEndedAtEachCall(true)).toStrictEqual([false]);
    expect(await messageEndedAtEachCall(false)).toStrictEqual([true]);
  });
});
