import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { asyncScheduler } from "rxjs";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { agentTool } from "../../src/agents/agent-tool.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { serveWebUi, type WebUiServer } from "../../src/server/index.js";

const CHROMIUM = "/usr/bin/chromium";

/** An agent whose researcher looks something up and deploys, the deploy waiting for a person. */
function researchAgent(): Agent {
  const look = defineTool({ name: "look", description: "Looks", parameters: Type.Object({}), execute: () => textResult("saw three files") });
  const deploy = defineTool({ name: "deploy", description: "Deploys", parameters: Type.Object({ target: Type.String() }), needsApproval: true, execute: (_id, { target }) => textResult(`deployed to ${target}`) });
  const researcher = agentTool({
    name: "researcher",
    description: "Researches",
    tools: [look, deploy],
    model: scriptedModel(
      [
        {
          content: [
            { type: "toolCall", id: "n-look", name: "look", arguments: {} },
            { type: "toolCall", id: "n-deploy", name: "deploy", arguments: { target: "staging" } },
          ],
        },
        "Looked and deployed.",
      ],
      { scheduler: asyncScheduler, delay: 10 },
    ),
  });
  const model = scriptedModel([{ content: [{ type: "toolCall", id: "r1", name: "researcher", arguments: { task: "look and deploy" } }] }, "All done."], { scheduler: asyncScheduler, delay: 10 });
  return new Agent({ model, tools: [researcher] });
}

describe.skipIf(!existsSync(CHROMIUM))("browser UI: a sub-agent at work (headless Chromium)", () => {
  let ui: WebUiServer;
  let browser: Browser;

  beforeAll(async () => {
    ui = await serveWebUi({ port: 0, createAgent: () => researchAgent() });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"] });
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  it("shows the sub-agent's steps in its call's card, its waiting call answered from there, folded once done", async () => {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${ui.url}#session=research-1`);
    await page.locator('#connection[data-status="open"]').waitFor();
    await page.fill("#input", "Research it");
    await page.press("#input", "Enter");
    const card = page.locator('.tool-card[data-tool="researcher"]');
    const approve = card.locator('details.sub-agent button.approve-tool[data-tool-call-id="n-deploy"]');
    await approve.waitFor({ timeout: 10_000 });
    expect(await card.locator("details.sub-agent").getAttribute("open")).toBe("");
    expect(await card.locator("details.sub-agent .approval span").textContent()).toBe('deploy {"target":"staging"} waits for approval');
    await approve.click();

    await page.locator(".msg.assistant .text", { hasText: "All done." }).waitFor({ timeout: 10_000 });
    expect(await card.locator("details.sub-agent .step").allTextContents()).toStrictEqual([
      "researcher ⚙ look {}",
      "researcher ✓ saw three files",
      'researcher ⚙ deploy {"target":"staging"}',
      "researcher ✓ deployed to staging",
      "researcher Looked and deployed.",
    ]);
    expect(await card.locator("details.sub-agent").getAttribute("open")).toBeNull();
    expect(await card.getAttribute("data-state")).toBe("done");
    expect(await card.locator(".result").textContent()).toBe("Looked and deployed.");
    expect(pageErrors).toStrictEqual([]);
    await page.close();
  });
});
