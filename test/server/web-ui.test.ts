import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { asyncScheduler } from "rxjs";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { demoModel } from "../../src/demo/demo-model.js";
import { demoTools } from "../../src/demo/demo-tools.js";
import { scriptedModel } from "../../src/testing/scripted-model.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { serveWebUi, type WebUiServer } from "../../src/server/index.js";
import type { LlmContext } from "../../src/types.js";

const CHROMIUM = "/usr/bin/chromium";

/**
 * Held open by the test that steers while the tool runs, so the tool cannot finish before the
 * page has shown the steering queued, however slow the machine (it was a 1 s race).
 */
let weatherGate: Promise<void> = Promise.resolve();

/** A tool that reports progress every 100 ms for a second, then answers once `weatherGate` opens; honours abort. */
const lookupWeather = defineTool({
  name: "lookup_weather",
  description: "Looks up the weather",
  parameters: Type.Object({ city: Type.String() }),
  execute: (_id, { city }, { signal, update }) =>
    new Promise((resolve, reject) => {
      let step = 0;
      const timer = setInterval(() => {
        step += 1;
        update({ content: [{ type: "text", text: `Contacting station ${step}/10 for ${city}…` }], details: { step } });
        if (step === 10) {
          clearInterval(timer);
          void weatherGate.then(() => resolve({ content: [{ type: "text", text: `${city}: sunny, 21 °C` }], details: { step } }));
        }
      }, 100);
      signal.addEventListener("abort", () => (clearInterval(timer), reject(new Error("aborted"))), { once: true });
    }),
});

const askedForFrench = (context: LlmContext) =>
  context.messages.some((message) => message.role === "user" && JSON.stringify(message.content).includes("French"));

/**
 * Long enough (about 1,600 words at 30 ms each, 48 s) that the abort lands mid-stream however
 * loaded the machine is; the test ends it with the abort, so its length costs nothing.
 */
const frenchReply = `Bien sûr ! Il fait beau à Paris, 21 degrés. ${"Je continue à décrire le temps en détail pour cette démonstration. ".repeat(150)}`;

function demoAgent(): Agent {
  const model = scriptedModel(
    [
      {
        content: [
          { type: "thinking", thinking: "The user wants the weather; I should call the tool." },
          { type: "text", text: "Let me check the weather in Paris for you." },
          { type: "toolCall", name: "lookup_weather", arguments: { city: "Paris" } },
        ],
      },
      // A function of the context: the reply reacts to steering that arrived mid-run.
      (context) =>
        askedForFrench(context)
          ? frenchReply
          : "It is sunny in Paris, 21 degrees.",
    ],
    { scheduler: asyncScheduler, delay: 30 },
  );
  return new Agent({ model, tools: [lookupWeather] });
}

describe.skipIf(!existsSync(CHROMIUM))("browser UI (headless Chromium)", () => {
  let ui: WebUiServer;
  let browser: Browser;

  beforeEach(() => {
    weatherGate = Promise.resolve();
  });

  beforeAll(async () => {
    ui = await serveWebUi({ port: 0, createAgent: () => demoAgent() });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });

  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  it("streams text and a tool card, steers mid-run, aborts, and shows it all", async () => {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(ui.url);
    await page.locator('#connection[data-status="open"]').waitFor();

    let openWeatherGate: () => void = () => undefined;
    weatherGate = new Promise((resolve) => (openWeatherGate = resolve));
    await page.fill("#input", "What's the weather in Paris?");
    await page.press("#input", "Enter");
    await expect.poll(() => page.locator(".msg.user").first().textContent()).toBe("What's the weather in Paris?");
    await page.locator(".msg.assistant .text", { hasText: "Let me check the weather in Paris" }).waitFor();
    const card = page.locator('.tool-card[data-tool="lookup_weather"]');
    await card.locator(".progress", { hasText: "Contacting station" }).waitFor();
    expect(JSON.parse((await card.locator(".args").textContent()) ?? "")).toEqual({ city: "Paris" });
    await expect.poll(() => page.locator("#run-status").textContent()).toBe("running tools…");

    // Enter while the agent works steers it: queued while the tool runs, then in the transcript as steering.
    await page.fill("#input", "Please answer in French");
    await page.press("#input", "Enter");
    const queued = page.locator('.msg.user.queued[data-kind="steer"]', { hasText: "Please answer in French" });
    await queued.waitFor();
    expect(await queued.locator(".label").textContent()).toBe("queued · steering");
    await expect.poll(() => card.getAttribute("data-state")).toBe("running");
    openWeatherGate();
    await card.locator(".result", { hasText: "Paris: sunny, 21 °C" }).waitFor();
    await expect.poll(() => card.getAttribute("data-state")).toBe("done");
    const steering = page.locator(".msg.user.steering", { hasText: "Please answer in French" });
    await steering.waitFor();
    expect(await steering.locator(".label").textContent()).toBe("steering");
    expect(await page.locator(".msg.user.queued").count()).toBe(0);
    await page.locator(".msg.assistant .text", { hasText: "Bien sûr ! Il fait beau à Paris" }).waitFor();
    await expect.poll(() => page.locator("#run-status").textContent()).toBe("writing…");

    // Abort mid-stream: the reply stops, marked aborted, and the page goes idle.
    await page.click("#abort");
    await page.locator('.msg.assistant[data-stop="aborted"] .stop').waitFor();
    await expect.poll(() => page.locator("#run-status").textContent()).toBe("idle");
    const reply = (await page.locator('.msg.assistant[data-stop="aborted"] .text').textContent()) ?? "";
    // Stopped mid-stream: what arrived is a beginning of the reply, not all of it (no length
    // bound: how much streams before the click lands depends on the machine's load).
    expect(frenchReply.startsWith(reply.trimEnd())).toBe(true);
    expect(reply.length).toBeLessThan(frenchReply.length);

    await page.locator("details.thinking summary").first().click();
    mkdirSync("test-results", { recursive: true });
    await page.screenshot({ path: "test-results/web-ui.png", fullPage: true });
    expect(pageErrors).toEqual([]);

    // The server kept the transcript: prompt, first reply, tool result, steering, aborted reply.
    const [sessionId] = ui.agents.sessionIds();
    const roles = ui.agents.session(sessionId as string)?.agent.messages.map((message) => (message as { role: string }).role);
    expect(roles).toEqual(["user", "assistant", "toolResult", "user", "assistant"]);
    await page.close();
  });

  it("the first screen names the model and offers examples; one runs two tools, one steers mid-run, one asks before writing", async () => {
    const sandbox = mkdtempSync(path.join(tmpdir(), "rxagent-web-ui-"));
    const demo = await serveWebUi({
      port: 0,
      createAgent: () => new Agent({ model: demoModel({ delay: 2 }), tools: demoTools({ stepDelay: 250, root: sandbox }) }),
      page: {
        model: "the offline demo model",
        demo: true,
        examples: [
          { label: "Two tools at once", prompt: "what is 12*7 and what time is it" },
          { label: "Steer it while it works", prompt: "what is (1+2)*(3+4)", steer: "also what is 5*5" },
          { label: "Ask before writing", prompt: 'write "hello from rxagent" to notes.txt' },
        ],
      },
    });
    try {
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(demo.url);
      await page.locator('#connection[data-status="open"]').waitFor();
      await expect.poll(() => page.locator("#model").textContent()).toBe("the offline demo model");
      expect(await page.locator("#model").getAttribute("data-demo")).toBe("true");
      expect(await page.locator(".welcome .answering").textContent()).toMatch(/^Answering: the offline demo model\. It runs offline/);
      expect(await page.locator(".welcome .example-label").allTextContents()).toStrictEqual(["Two tools at once", "Steer it while it works", "Ask before writing"]);

      await page.locator("button.example", { hasText: "Two tools at once" }).click();
      await expect.poll(() => page.locator(".msg.user").first().textContent()).toBe("what is 12*7 and what time is it");
      await expect.poll(() => page.locator('.tool-card[data-tool="calculator"]').getAttribute("data-state")).toBe("done");
      await expect.poll(() => page.locator('.tool-card[data-tool="clock"]').getAttribute("data-state")).toBe("done");
      await page.locator(".msg.assistant .text", { hasText: "12*7 = 84" }).last().waitFor();
      await expect.poll(() => page.locator("#run-status").textContent()).toBe("idle");
      expect(await page.locator(".welcome").count()).toBe(0);

      // A fresh session shows the first screen again; the steering example steers once a tool runs.
      await page.goto(`${demo.url}#session=steer-example`);
      await page.reload();
      await page.locator("button.example", { hasText: "Steer it while it works" }).click();
      await page.locator(".msg.user.steering", { hasText: "also what is 5*5" }).waitFor();
      await page.locator(".msg.assistant .text", { hasText: "5*5 = 25" }).last().waitFor();
      await expect.poll(() => page.locator("#run-status").textContent()).toBe("idle");

      // The approval example: the call waits for Approve, nothing is written before, the file after.
      await page.goto(`${demo.url}#session=approval-example`);
      await page.reload();
      await page.locator("button.example", { hasText: "Ask before writing" }).click();
      const card = page.locator('.tool-card[data-tool="write_file"]');
      await expect.poll(() => card.getAttribute("data-state")).toBe("awaiting approval");
      expect(existsSync(path.join(sandbox, "notes.txt"))).toBe(false);
      await card.locator("button.approve-tool").click();
      await expect.poll(() => card.getAttribute("data-state")).toBe("done");
      await page.locator(".msg.assistant .text", { hasText: "Wrote 18 bytes to notes.txt." }).last().waitFor();
      expect(readFileSync(path.join(sandbox, "notes.txt"), "utf8")).toBe("hello from rxagent");
      await expect.poll(() => page.locator("#run-status").textContent()).toBe("idle");
      expect(pageErrors).toEqual([]);
      await page.close();
    } finally {
      await demo.close();
      rmSync(sandbox, { recursive: true, force: true });
    }
  });

  it("shows a tool stopped by abort as aborted, not as an error", async () => {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${ui.url}#session=abort-tool`);
    await page.locator('#connection[data-status="open"]').waitFor();
    // Held shut for the whole test: the tool cannot answer before the click lands, however slow
    // the machine (CI once saw it finish first at load 8: "done" instead of "aborted").
    weatherGate = new Promise(() => undefined);
    await page.fill("#input", "Weather, please");
    await page.press("#input", "Enter");
    const card = page.locator('.tool-card[data-tool="lookup_weather"]');
    await card.locator(".progress", { hasText: "Contacting station" }).waitFor();
    await page.click("#abort");
    await expect.poll(() => card.getAttribute("data-state")).toBe("aborted");
    expect(await card.locator(".status").textContent()).toBe("aborted");
    expect(await card.locator(".result").textContent()).toBe("Tool execution was aborted.");
    await expect.poll(() => page.locator("#run-status").textContent()).toBe("idle");
    // After a reload it reads the same from the transcript.
    await page.reload();
    await expect.poll(() => page.locator('.tool-card[data-tool="lookup_weather"]').getAttribute("data-state")).toBe("aborted");
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it("explains a refused token and keeps the typed prompt; the page's #token gets in", async () => {
    const guarded = await serveWebUi({ port: 0, heartbeatIntervalMs: 0, auth: (token) => token === "s3cret", createAgent: () => demoAgent() });
    try {
      const page = await browser.newPage();
      const sockets: string[] = [];
      page.on("websocket", (socket) => sockets.push(socket.url()));
      // The page's timers on a clock the test moves: any reconnect timer fires when told to.
      await page.clock.install();
      await page.goto(guarded.url);
      await page.locator('#connection[data-status="refused"]').waitFor();
      await expect.poll(() => page.locator("#error").textContent()).toMatch(/refused this page: it needs a token.*#token=/);
      await page.fill("#input", "Hello?");
      await page.press("#input", "Enter");
      await expect.poll(() => page.inputValue("#input")).toBe("Hello?");
      // Refused for good: a minute of the page's time later, still the one socket. The page
      // reports a socket it opens before it answers the evaluate that follows.
      await page.clock.runFor(60_000);
      await page.evaluate(() => undefined);
      expect(sockets).toHaveLength(1);
      expect(await page.locator("#connection").getAttribute("data-status")).toBe("refused");

      await page.goto(`${guarded.url}#token=s3cret`);
      await page.reload();
      await page.locator('#connection[data-status="open"]').waitFor();
      await page.close();
    } finally {
      await guarded.close();
    }
  });

  it("pauses a connection the server closed for idling, says why, and reconnects when the user sends", async () => {
    const sleepy = await serveWebUi({ port: 0, heartbeatIntervalMs: 0, idleTimeoutMs: 300, createAgent: () => demoAgent() });
    try {
      const page = await browser.newPage();
      await page.goto(sleepy.url);
      await page.locator('#connection[data-status="paused"]').waitFor({ timeout: 5000 });
      await expect.poll(() => page.locator("#error").textContent()).toMatch(/without activity; sending a message reconnects/);
      await page.fill("#input", "Still there?");
      await page.press("#input", "Enter");
      await page.locator(".msg.assistant .text", { hasText: "Let me check the weather in Paris" }).waitFor();
      expect(await page.locator("#connection").getAttribute("data-status")).toBe("open");
      await page.close();
    } finally {
      await sleepy.close();
    }
  });

  it("shows a refused session as closed rather than connecting forever", async () => {
    const refusing = await serveWebUi({ port: 0, createAgent: () => undefined });
    try {
      const page = await browser.newPage();
      await page.goto(refusing.url);
      await page.locator('#connection[data-status="closed"]').waitFor({ timeout: 5000 });
      await page.close();
    } finally {
      await refusing.close();
    }
  });

  it("forgets a finished run's tool progress when a new run starts, so a reused call id starts pending", async () => {
    const page = await browser.newPage();
    await page.goto(ui.url);
    // A string, not a function: vitest would rewrite a dynamic import inside a function.
    const states = await page.evaluate(`(async () => {
      const { AgentConnection } = await import("/client.js");
      const connection = new AgentConnection("ws://" + location.host + "/ws");
      const event = (seq, body) => connection.receive({ type: "event", seq, event: body });
      const call = { toolCallId: "call_1_1", toolName: "lookup_weather" };
      event(1, { type: "agent_start" });
      event(2, { type: "tool_execution_start", ...call, args: {} });
      event(3, { type: "tool_execution_end", ...call, result: { content: [], details: {} }, isError: false });
      const before = connection.toolRuns.get("call_1_1")?.done === true;
      // After a reset the demo model numbers its calls from 1 again.
      event(4, { type: "agent_start" });
      event(5, { type: "tool_execution_start", ...call, args: {} });
      const after = connection.toolRuns.get("call_1_1")?.done === true;
      connection.close();
      return [before, after];
    })()`);
    expect(states).toEqual([true, false]);
    await page.close();
  });

  it("serves the page's files with a strict content security policy, and 404 otherwise", async () => {
    const page = await fetch(ui.url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/app.js">');
    expect((await fetch(new URL("/client.js", ui.url))).headers.get("content-type")).toContain("text/javascript");
    expect((await fetch(new URL("/../package.json", ui.url))).status).toBe(404);
    expect((await fetch(new URL("/nope", ui.url))).status).toBe(404);
  });
});
