import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync } from "node:fs";
import { Type } from "@sinclair/typebox";
import { deleteFile } from "./chat-server.js";
import { chromium, type Browser } from "playwright-core";
import { asyncScheduler, filter, firstValueFrom } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatHandler, createChatHandler, handleNodeRequest } from "../../src/ai-sdk/index.js";
import { Agent, defineTool, type AgentEvent, type LlmContext } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { bundleChatPage, CHAT_PAGE_HTML } from "./browser/chat-page-bundle.js";

const CHROMIUM = "/usr/bin/chromium";
/** Where to save screenshots (a path prefix outside the repository), e.g. for a review; none by default. */
const SCREENSHOTS = process.env.AISDK_SCREENSHOTS;

const add = defineTool({
  name: "add",
  description: "Adds two numbers",
  parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
  execute: async (_id, { a, b }) => ({ content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } }),
});

const lastUserText = (context: LlmContext) => JSON.stringify(context.messages.filter((message) => message.role === "user").at(-1));
/** About 40 s of words at 20 ms each: `stop()` lands mid-stream however loaded the machine is. */
const longStory = `Once upon a time ${"the agent kept on talking about streams ".repeat(300)}`;

function chatAgent(): Agent {
  const model = scriptedModel(
    [
      { content: [{ type: "text", text: "Let me add those." }, { type: "toolCall", id: "call_add", name: "add", arguments: { a: 2, b: 3 } }] },
      "2 + 3 = 5.",
      (context) => (lastUserText(context).includes("story") ? longStory : "unexpected"),
      // The third prompt: answered from the transcript the server kept, stopped story included.
      (context) => `I remember ${context.messages.filter((message) => message.role === "user").length} prompts, and that 2 + 3 = 5.`,
      { content: [{ type: "toolCall", id: "call_delete", name: "delete_file", arguments: { path: "notes.txt" } }] },
      "Deleted notes.txt.",
    ],
    { scheduler: asyncScheduler, delay: 20 },
  );
  return new Agent({ model, tools: [add, deleteFile] });
}

/** Tells a story in two parts, holding between them in a tool until `gate` opens. */
function storyAgent(gate: Promise<void>): Agent {
  const wait = defineTool({
    name: "wait",
    description: "Waits",
    parameters: Type.Object({}),
    execute: async () => (await gate, { content: [{ type: "text", text: "waited" }], details: {} }),
  });
  const model = scriptedModel([{ content: [{ type: "text", text: "Once upon a time" }, { type: "toolCall", id: "call_wait", name: "wait", arguments: {} }] }, "The end."], {
    scheduler: asyncScheduler,
    delay: 20,
  });
  return new Agent({ model, tools: [wait] });
}

describe.skipIf(!existsSync(CHROMIUM))("a real useChat page (React, @ai-sdk/react) against the chat handler, in headless Chromium", () => {
  let server: Server;
  let handler: ChatHandler;
  /** A second endpoint whose runs outlive their client, for `resume: true`. */
  let resumable: ChatHandler;
  let resumableAgent: Agent | undefined;
  let openGate!: () => void;
  let browser: Browser;
  let url: string;
  const agents: Agent[] = [];

  beforeAll(async () => {
    const script = await bundleChatPage();
    handler = createChatHandler({ createAgent: () => agents[agents.push(chatAgent()) - 1] });
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    resumable = createChatHandler({ path: "/api/resumable", abortOnDisconnect: false, createAgent: () => (resumableAgent = storyAgent(gate)) });
    server = createServer((request, response) => {
      if (handleNodeRequest(handler, request, response) || handleNodeRequest(resumable, request, response)) return;
      if (request.url === "/page.js") return void response.writeHead(200, { "content-type": "text/javascript" }).end(script);
      if (request.url?.startsWith("/?")) return void response.writeHead(200, { "content-type": "text/html" }).end(CHAT_PAGE_HTML);
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    // Bundling React and ai (4 s on a loaded machine) and starting Chromium.
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await handler?.close();
    await resumable?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it("renders a prompt's tool call, stop() aborts the run on the server, a second prompt continues the same chat, and an approval is answered from the page", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 800 } });
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${url}/?chat=chat-browser`);

    await page.fill("#input", "what is 2 + 3?");
    await page.click("#send");
    const tool = page.locator('.message.assistant .tool[data-tool="add"]');
    await tool.locator(".output").waitFor();
    expect(await tool.getAttribute("data-state")).toBe("output-available");
    expect(JSON.parse((await tool.locator(".input").textContent()) ?? "")).toEqual({ a: 2, b: 3 });
    expect(JSON.parse((await tool.locator(".output").textContent()) ?? "")).toEqual({ content: [{ type: "text", text: "5" }], details: { sum: 5 } });
    await page.locator(".message.assistant .text", { hasText: "2 + 3 = 5." }).waitFor();
    await page.locator('#status[data-status="ready"]').waitFor();
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}-tool-call.png`, fullPage: true });

    // stop() mid-stream: the fetch is aborted, and the server aborts the run.
    const agent = agents[0]!;
    expect(agents).toHaveLength(1);
    const ended = firstValueFrom(agent.events$.pipe(filter((event): event is Extract<AgentEvent, { type: "agent_end" }> => event.type === "agent_end")));
    await page.fill("#input", "tell me a long story");
    await page.click("#send");
    await page.locator(".message.assistant .text", { hasText: "Once upon a time" }).waitFor();
    await page.click("#stop");
    expect((await ended).reason).toBe("aborted");
    await page.locator('#status[data-status="ready"]').waitFor();
    const story = (await page.locator(".message.assistant .text").last().textContent()) ?? "";
    expect(story.length).toBeLessThan(longStory.length);
    expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}-stopped.png`, fullPage: true });

    // The same chat goes on: same agent, whose transcript holds all three prompts.
    await page.fill("#input", "what do you remember?");
    await page.click("#send");
    await page.locator(".message.assistant .text", { hasText: "I remember 3 prompts, and that 2 + 3 = 5." }).waitFor();
    expect(agents).toHaveLength(1);
    expect(handler.chatIds()).toEqual(["chat-browser"]);
    expect(await page.locator(".message.user").count()).toBe(3);
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}-continued.png`, fullPage: true });

    // An approval, through the data part and the commands route: the call waits until the page approves.
    await page.fill("#input", "delete notes.txt");
    await page.click("#send");
    await page.locator('.approval[data-state="waiting"] .approve').waitFor();
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}-approval-waiting.png`, fullPage: true });
    await page.locator('.approval[data-state="waiting"] .approve').click();
    await page.locator('.tool[data-tool="delete_file"][data-state="output-available"]').waitFor();
    await page.locator('.approval[data-state="approved"]').waitFor();
    await page.locator(".message.assistant .text", { hasText: "Deleted notes.txt." }).waitFor();
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}-approval.png`, fullPage: true });
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 90_000);

  it("with resume: true, a fresh chat opens without an error, and a reload mid-run picks the run up from its start to its end", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 600 } });
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    // useChat asks GET …/chat-resumed/stream at once: a chat with nothing in flight, not an error.
    const asked = page.waitForResponse((response) => response.url().endsWith("/api/resumable/chat-resumed/stream"));
    await page.goto(`${url}/?chat=chat-resumed&api=/api/resumable&resume`);
    expect((await asked).status()).toBe(204);
    expect(await page.locator('#status:not([data-status="submitted"])').getAttribute("data-status")).toBe("ready");
    expect(await page.locator("#error").count()).toBe(0);

    await page.fill("#input", "tell me a story");
    await page.click("#send");
    // The run holds in its tool until the reloaded page has picked it up.
    await page.locator('.tool[data-tool="wait"]').waitFor();
    await page.reload();
    await page.locator(".message.assistant .text", { hasText: "Once upon a time" }).waitFor();
    await page.locator('.tool[data-tool="wait"]').waitFor();
    openGate();
    await page.locator(".message.assistant .text", { hasText: "The end." }).waitFor();
    await page.locator('#status[data-status="ready"]').waitFor();
    expect(resumableAgent?.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
    expect(await page.locator("#error").count()).toBe(0);
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}-resumed.png`, fullPage: true });
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 90_000);
});
