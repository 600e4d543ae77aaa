import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { asyncScheduler } from "rxjs";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { serveWebUi, type WebUiServer } from "../../src/server/index.js";
import type { AgentToolResult, ToolResultMessage } from "../../src/types.js";

const CHROMIUM = "/usr/bin/chromium";

/** Runs until its signal fires (a search that never comes back on its own). */
const slowSearch = defineTool({
  name: "slow_search",
  description: "Searches for a long time",
  parameters: Type.Object({ query: Type.String() }),
  execute: (_id, _args, { signal }) =>
    new Promise<AgentToolResult>((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true })),
});

/** Answers after 300 ms. */
const quickRead = defineTool({
  name: "quick_read",
  description: "Reads a file",
  parameters: Type.Object({ path: Type.String() }),
  execute: (_id, { path }) => new Promise<AgentToolResult>((resolve) => setTimeout(() => resolve({ content: [{ type: "text", text: `contents of ${path}` }], details: {} }), 300)),
});

function toolAgent(): Agent {
  const model = scriptedModel(
    [
      {
        content: [
          { type: "toolCall", id: "search-1", name: "slow_search", arguments: { query: "rxjs" } },
          { type: "toolCall", id: "read-1", name: "quick_read", arguments: { path: "README.md" } },
        ],
      },
      "Done with what I have.",
    ],
    { scheduler: asyncScheduler, delay: 10 },
  );
  return new Agent({ model, tools: [slowSearch, quickRead] });
}

/** Deploys after a person approves; two calls in one batch. */
const deploy = defineTool({
  name: "deploy",
  description: "Deploys to a target",
  parameters: Type.Object({ target: Type.String() }),
  needsApproval: true,
  execute: (_id, { target }) => ({ content: [{ type: "text", text: `deployed to ${target}` }], details: {} }),
});

function approvalAgent(): Agent {
  const model = scriptedModel(
    [
      {
        content: [
          { type: "toolCall", id: "deploy-staging", name: "deploy", arguments: { target: "staging" } },
          { type: "toolCall", id: "deploy-prod", name: "deploy", arguments: { target: "prod" } },
        ],
      },
      "Deployed where you allowed it.",
    ],
    { scheduler: asyncScheduler, delay: 10 },
  );
  return new Agent({ model, tools: [deploy] });
}

/** Works until the test calls `finish(id)`. */
const finishers = new Map<string, () => void>();
const finish = (id: string) => finishers.get(id)?.();
const work = defineTool({
  name: "work",
  description: "Works until it is told to finish",
  parameters: Type.Object({}),
  execute: (id) => new Promise<AgentToolResult>((resolve) => finishers.set(id, () => resolve({ content: [{ type: "text", text: "worked" }], details: {} }))),
});

/** Two calls and one slot (`maxConcurrency: 1`): the second waits for the first. */
function slotAgent(): Agent {
  const model = scriptedModel(
    [
      {
        content: [
          { type: "toolCall", id: "first", name: "work", arguments: {} },
          { type: "toolCall", id: "second", name: "work", arguments: {} },
        ],
      },
      "Both done.",
    ],
    { scheduler: asyncScheduler, delay: 10 },
  );
  return new Agent({ model, tools: [work], maxConcurrency: 1 });
}

describe.skipIf(!existsSync(CHROMIUM))("browser UI tool controls (headless Chromium)", () => {
  let ui: WebUiServer;
  let browser: Browser;

  beforeAll(async () => {
    ui = await serveWebUi({ port: 0, createAgent: (id) => (id.startsWith("approve") ? approvalAgent() : id.startsWith("slots") ? slotAgent() : toolAgent()) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"] });
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  it("cancels one running tool call from its card: the card says cancelled, the other call and the run finish", async () => {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${ui.url}#session=cancel-tool`);
    await page.locator('#connection[data-status="open"]').waitFor();
    await page.fill("#input", "Search and read");
    await page.press("#input", "Enter");
    const search = page.locator('.tool-card[data-tool="slow_search"]');
    const read = page.locator('.tool-card[data-tool="quick_read"]');
    await expect.poll(() => read.getAttribute("data-state")).toBe("done");
    expect(await search.getAttribute("data-state")).toBe("running");
    // Only an unfinished call offers to cancel.
    expect(await read.locator("button.cancel-tool").count()).toBe(0);
    await search.locator("button.cancel-tool").click();
    await expect.poll(() => search.getAttribute("data-state")).toBe("cancelled");
    expect(await search.locator(".status").textContent()).toBe("cancelled");
    expect(await search.locator(".result").textContent()).toBe("Tool call was cancelled: cancelled in the page");
    await page.locator(".msg.assistant .text", { hasText: "Done with what I have." }).waitFor();
    await expect.poll(() => page.locator("#run-status").textContent()).toBe("idle");
    expect(await search.locator("button.cancel-tool").count()).toBe(0);
    const results = ui.agents.session("cancel-tool")?.agent.messages.filter((message): message is ToolResultMessage => (message as { role: string }).role === "toolResult");
    expect(results?.map((result) => [result.toolCallId, result.isError])).toStrictEqual([
      ["search-1", true],
      ["read-1", false],
    ]);
    expect(pageErrors).toStrictEqual([]);
    await page.close();
  });

  it("shows calls waiting for approval on a second page that attached later; Approve runs one, Deny gives the other its error result", async () => {
    const first = await browser.newPage();
    const pageErrors: string[] = [];
    first.on("pageerror", (error) => pageErrors.push(error.message));
    await first.goto(`${ui.url}#session=approve-1`);
    await first.locator('#connection[data-status="open"]').waitFor();
    await first.fill("#input", "Deploy everywhere");
    await first.press("#input", "Enter");
    const staging = (page: typeof first) => page.locator(".tool-card", { has: page.locator('button[data-tool-call-id="deploy-staging"]') });
    await staging(first).waitFor({ timeout: 10_000 });
    // Polled: a card shows before the approval it waits for (CI on Node 24 counted 0 at once).
    await expect.poll(() => first.locator('.tool-card[data-state="awaiting approval"]').count()).toBe(2);

    // A second client, attached now, gets the waiting calls in its snapshot and can answer.
    const second = await browser.newPage();
    second.on("pageerror", (error) => pageErrors.push(error.message));
    await second.goto(`${ui.url}#session=approve-1`);
    await second.locator('#connection[data-status="open"]').waitFor();
    await expect.poll(() => second.locator('.tool-card[data-state="awaiting approval"]').count()).toBe(2);
    await second.locator('button.approve-tool[data-tool-call-id="deploy-staging"]').click();
    await first.locator('button.deny-tool[data-tool-call-id="deploy-prod"]').click();

    for (const page of [first, second]) {
      await page.locator(".msg.assistant .text", { hasText: "Deployed where you allowed it." }).waitFor();
      const cards = page.locator(".tool-card");
      expect(await cards.evaluateAll((nodes) => nodes.map((node) => [node.getAttribute("data-state"), node.querySelector(".result")?.textContent]))).toStrictEqual([
        ["done", "deployed to staging"],
        ["denied", "Tool call was denied: denied in the page"],
      ]);
    }
    expect(pageErrors).toStrictEqual([]);
    await first.close();
    await second.close();
  });

  it("shows a call waiting for a concurrency slot as waiting, then running once it has the slot, also on a page that attached meanwhile", async () => {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${ui.url}#session=slots-1`);
    await page.locator('#connection[data-status="open"]').waitFor();
    await page.fill("#input", "Work twice");
    await page.press("#input", "Enter");
    const card = (target: typeof page, id: string) => target.locator(".tool-card", { has: target.locator(`button[data-tool-call-id="${id}"]`) });
    const states = (target: typeof page) => target.locator(".tool-card").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-state")));
    await card(page, "second").waitFor({ timeout: 10_000 });
    // Polled, as the approval cards above: a card shows before the event that sets its state.
    await expect.poll(() => states(page)).toStrictEqual(["running", "waiting"]);
    expect(await card(page, "second").locator(".status").textContent()).toBe("waiting");

    // A page that attaches now sees the same from its snapshot's state.
    const late = await browser.newPage();
    late.on("pageerror", (error) => pageErrors.push(error.message));
    await late.goto(`${ui.url}#session=slots-1`);
    await late.locator('#connection[data-status="open"]').waitFor();
    await expect.poll(() => states(late)).toStrictEqual(["running", "waiting"]);

    finish("first");
    for (const target of [page, late]) await expect.poll(() => states(target), { timeout: 10_000 }).toStrictEqual(["done", "running"]);
    finish("second");
    for (const target of [page, late]) await expect.poll(() => states(target), { timeout: 10_000 }).toStrictEqual(["done", "done"]);
    await page.locator(".msg.assistant .text", { hasText: "Both done." }).waitFor();
    expect(pageErrors).toStrictEqual([]);
    await page.close();
    await late.close();
  });
});
