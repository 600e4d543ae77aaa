import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { Agent } from "../../src/agent/agent.js";
import { serveWebUi, type WebUiServer } from "../../src/server/index.js";
import { argumentsGate, gatedArgumentsModel, writeFileTool } from "../helpers/gated-arguments-model.js";

const CHROMIUM = "/usr/bin/chromium";

/** About 60 KB of arguments, streamed in 1 KB deltas: the page gets them as `j` operations (protocol 3). */
const written = { path: "notes.txt", content: Array.from({ length: 3000 }, (_unused, line) => `line ${line}: lorem ipsum`).join("\n") };
const argumentsText = JSON.stringify(written);

/** The gate of the test that runs: the model pauses there, 30 KB into the arguments. */
let gate = argumentsGate().gate;

async function cardArguments(page: Page): Promise<unknown> {
  return JSON.parse((await page.locator('.tool-card[data-tool="write_file"] .args').first().textContent()) ?? "null");
}

describe.skipIf(!existsSync(CHROMIUM))("browser UI, a tool call's arguments streamed over protocol 3 (headless Chromium)", () => {
  let ui: WebUiServer;
  let browser: Browser;

  beforeAll(async () => {
    ui = await serveWebUi({ port: 0, createAgent: () => new Agent({ model: gatedArgumentsModel(argumentsText, 30 * 1024, () => gate), tools: [writeFileTool] }) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  it("speaks protocol 3 to a client that offers rxagent.3, and 2 to one that does not", async () => {
    const ackTo = async (protocols: string[]) => {
      const socket = new WebSocket(ui.url.replace("http", "ws") + "ws", protocols);
      const ack = await new Promise<{ protocol?: number }>((resolve, reject) => {
        socket.on("open", () => socket.send(JSON.stringify({ type: "attach", id: "a1" })));
        socket.on("message", (data) => resolve(JSON.parse(String(data)) as { protocol?: number }));
        socket.on("error", reject);
      });
      socket.close();
      return ack;
    };
    expect(await ackTo(["rxagent.3"])).toMatchObject({ type: "ack", id: "a1", protocol: 3 });
    expect(await ackTo([])).toMatchObject({ type: "ack", id: "a1", protocol: 2 });
  });

  it("shows the arguments as they stream, to a page that was there and to one that joined mid-call, and whole at the end", async () => {
    const handles = argumentsGate();
    gate = handles.gate;
    const { halfway, open } = handles;
    const pageErrors: string[] = [];
    const first = await browser.newPage();
    first.on("pageerror", (error) => pageErrors.push(error.message));
    // What the page's socket receives: protocol 3 as the server writes it (the page offers rxagent.3).
    const received: string[] = [];
    first.on("websocket", (socket) => socket.on("framereceived", ({ payload }) => received.push(String(payload))));
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
    expect(received.some((frame) => frame.startsWith('{"type":"ack"') && frame.includes('"protocol":3'))).toBe(true);
    expect(received.some((frame) => frame.startsWith('{"type":"end"'))).toBe(true);
    const kept = ui.agents.session(session as string)?.agent.messages[1];
    expect(kept).toMatchObject({ role: "assistant", content: [{ type: "text", text: "Writing the file." }, { type: "toolCall", arguments: written }] });
    await first.close();
    await second.close();
  });
});
