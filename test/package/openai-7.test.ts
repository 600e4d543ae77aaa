import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../helpers/openai-fixtures.js";
import { type ReplayServer, startReplayServer } from "../helpers/sse-replay-server.js";
import { npm, repositoryRoot, run } from "./consumer.js";

// The `openai` peer range says `^6.49.0 || ^7`: this installs openai 7 next to the packed tarball
// and streams through rxagent/openai against a local server. openai 7 needs Node 22, so the file
// runs only there; `.ci/run` runs it again on Node 24 (the default `npm test` never does: it
// installs from the registry).

const nodeMajor = Number(process.versions.node.split(".")[0]);
const supported = nodeMajor >= 22;
if (!supported) console.warn(`test/package/openai-7.test.ts skipped: openai 7 needs Node >= 22, this is Node ${process.versions.node} (.ci/run runs it on Node 24)`);

const fixture = loadFixture("chat-text-usage-1");
const expectedText = (fixture.chunks as { choices: { delta?: { content?: string | null } }[] }[])
  .flatMap((chunk) => chunk.choices.map((choice) => choice.delta?.content ?? ""))
  .join("");

describe.skipIf(!supported)(`openai 7 on Node ${process.versions.node}`, () => {
  let work: string;
  let server: ReplayServer;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), "rxagent-openai7-"));
    const packOutput = await npm(["pack", "--json", "--pack-destination", work], repositoryRoot);
    const [packed] = JSON.parse(packOutput.stdout.slice(packOutput.stdout.indexOf("["))) as { filename: string }[];
    writeFileSync(path.join(work, "package.json"), JSON.stringify({ name: "consumer-openai7", private: true, type: "module" }));
    await npm(["install", "--prefer-offline", "--no-audit", "--no-fund", path.join(work, packed!.filename), "rxjs@^7.8", "openai@^7"], work);
    server = await startReplayServer([{ kind: "fixture", fixture }]);
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("streams a reply through openaiChat with openai 7 installed", async () => {
    const script = `import { readFileSync } from "node:fs";
import { lastValueFrom, filter } from "rxjs";
import { agentLoop } from "rxagent";
import { openaiChat } from "rxagent/openai";
const model = openaiChat({ model: "gpt-4.1-nano", apiKey: "sk-test", baseURL: ${JSON.stringify(server.baseURL)}, maxRetries: 0 });
const end = await lastValueFrom(agentLoop([{ role: "user", content: "Hi", timestamp: 0 }], { messages: [] }, { model }).pipe(filter((event) => event.type === "agent_end")));
const reply = end.messages.at(-1);
const openaiVersion = JSON.parse(readFileSync("node_modules/openai/package.json", "utf8")).version; // openai 7 exports no ./package.json
console.log(JSON.stringify({ openaiVersion, stopReason: reply.stopReason, errorMessage: reply.errorMessage, text: reply.content.map((block) => block.text ?? "").join("") }));`;
    writeFileSync(path.join(work, "chat.mjs"), script);
    const { code, stdout, stderr } = await run(process.execPath, ["chat.mjs"], { cwd: work });
    expect({ code, stderr }).toStrictEqual({ code: 0, stderr: "" });
    const result = JSON.parse(stdout) as { openaiVersion: string; stopReason: string; text: string };
    expect(result.openaiVersion).toMatch(/^7\./);
    expect(result).toStrictEqual({ openaiVersion: result.openaiVersion, stopReason: "stop", text: expectedText });
  });
});
