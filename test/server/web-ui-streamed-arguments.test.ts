import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { Observable } from "rxjs";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { Agent } from "../../src/agent/agent.js";
import { AssistantMessageDraft } from "../../src/model/assistant-message-draft.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { serveWebUi, type WebUiServer } from "../../src/server/index.js";
import type { Model, ModelEvent } from "../../src/types.js";

const CHROMIUM = "/usr/bin/chromium";

/** About 60 KB of arguments, streamed in 1 KB deltas: the page gets them as `j` operations (protocol 3). */
const written = { path: "notes.txt", content: Array.from({ length: 3000 }, (_unused, line) => `line ${line}: lorem ipsum`).join("\n") };
const argumentsText = JSON.stringify(written);

/** Set by the test: the model waits there halfway through the arguments, and says it has. */
let gate = { reached: () => undefined as void, open: Promise.resolve() };

/** Streams a text, then one `write_file` call in 1 KB deltas 2 ms apart (pausing at the gate halfway), then "Done." once the tool answered. */
function streamingModel(): Model {
  let calls = 0;
  return {
    id: "streaming",
    provider: "test",
    api: "test",
    stream: () =>
      new Observable<ModelEvent>((subscriber) => {
        const first = calls++ === 0;
        const draft = new AssistantMessageDraft({ api: "test", provider: "test", model: "streaming", timestamp: 1 });
        const steps: (ModelEvent[] | "gate")[] = [draft.start()];
        const text = draft.openText();
        steps.push([...text.events, ...draft.appendText(text.index, first ? "Writing the file." : "Done."), ...draft.close(text.index)]);
        if (first) {
          const call = draft.openToolCall("call_write", "write_file");
          steps.push(call.events);
          for (let offset = 0; offset < argumentsText.length; offset += 1024) {
            if (offset === 30 * 1024) steps.push("gate");
            steps.push(draft.appendToolArguments(call.index, argumentsText.slice(offset, offset + 1024)));
          }
          steps.push(draft.close(call.index));
        }
        steps.push(draft.finish(first ? "toolUse" : "stop"));
        let stopped = false;
        void (async () => {
          for (const step of steps) {
            if (step === "gate") {
              gate.reached();
              await gate.open;
              continue;
            }
            await new Promise((resolve) => setTimeout(resolve, 2));
            if (stopped) return;
            for (const event of step) subscriber.next(event);
          }
          subscriber.complete();
        })();
        return () => void (stopped = true);
      }),
  };
}

const writeFile = defineTool({
  name: "write_file",
  description: "Writes a file",
  parameters: Type.Object({ path: Type.String(), content: Type.String() }),
  execute: async (_id, { path, content }) => ({ content: [{ type: "text", text: `wrote ${content.length} characters to ${path}` }], details: {} }),
});

async function cardArguments(page: Page): Promise<unknown> {
  return JSON.parse((await page.locator('.tool-card[data-tool="write_file"] .args').first().textContent()) ?? "null");
}

describe.skipIf(!existsSync(CHROMIUM))("browser UI, a tool call's arguments streamed over protocol 3 (headless Chromium)", () => {
  let ui: WebUiServer;
  let browser: Browser;

  beforeAll(async () => {
    ui = await serveWebUi({ port: 0, createAgent: () => new Agent({ model: streamingModel(), tools: [writeFile] }) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  it("speaks protocol 3 by default", async () => {
    const socket = new WebSocket(ui.url.replace("http", "ws") + "ws");
    const ack = await new Promise<{ protocol?: number }>((resolve, reject) => {
      socket.on("open", () => socket.send(JSON.stringify({ type: "attach", id: "a1" })));
      socket.on("message", (data) => resolve(JSON.parse(String(data)) as { protocol?: number }));
      socket.on("error", reject);
    });
    socket.close();
    expect(ack).toMatchObject({ type: "ack", id: "a1", protocol: 3 });
  });

  it("shows the arguments as they stream, to a page that was there and to one that joined mid-call, and whole at the end", async () => {
    let reached = () => undefined as void;
    let open = () => undefined as void;
    const halfway = new Promise<void>((resolve) => (reached = resolve));
    gate = { reached, open: new Promise<void>((resolve) => (open = resolve)) };
    const pageErrors: string[] = [];
    const first = await browser.newPage();
    first.on("pageerror", (error) => pageErrors.push(error.message));
    await first.goto(ui.url);
    await first.locator('#connection[data-status="open"]').waitFor();
    await first.fill("#input", "Write my notes");
    await first.press("#input", "Enter");
    await halfway;

    // Halfway: what streamed so far, parsed by the page from the deltas it was sent.
    const streamedSoFar = (value: unknown) => {
      const shown = value as { path?: string; content?: string };
      return shown.path === "notes.txt" && typeof shown.content === "string" && shown.content.length > 10_000 && written.content.startsWith(shown.content);
    };
    await expect.poll(async () => streamedSoFar(await cardArguments(first))).toBe(true);

    // A second page joins the session now: a snapshot with the text streamed so far, then the rest as deltas.
    // The page's session: the one whose agent has a transcript (the first test attached to one of its own).
    const session = ui.agents.sessionIds().find((id) => (ui.agents.session(id)?.agent.messages.length ?? 0) > 0);
    const second = await browser.newPage();
    second.on("pageerror", (error) => pageErrors.push(error.message));
    await second.goto(`${ui.url}#session=${session}`);
    await second.locator('#connection[data-status="open"]').waitFor();
    expect(streamedSoFar(await cardArguments(second))).toBe(true);
    open();

    for (const page of [first, second]) {
      await page.locator(".msg.assistant .text", { hasText: "Done." }).waitFor();
      await expect.poll(() => page.locator('.tool-card[data-tool="write_file"]').getAttribute("data-state")).toBe("done");
      expect(await cardArguments(page)).toStrictEqual(written);
      expect(await page.locator('.tool-card[data-tool="write_file"] .result').textContent()).toBe(`wrote ${written.content.length} characters to notes.txt`);
    }
    expect(pageErrors).toStrictEqual([]);
    const kept = ui.agents.session(session as string)?.agent.messages[1];
    expect(kept).toMatchObject({ role: "assistant", content: [{ type: "text", text: "Writing the file." }, { type: "toolCall", arguments: written }] });
    await first.close();
    await second.close();
  });
});
