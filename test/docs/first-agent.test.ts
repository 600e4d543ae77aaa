import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../helpers/openai-fixtures.js";
import { type ReplayServer, startReplayServer } from "../helpers/sse-replay-server.js";
import { root, runWithTsx, snippetsOf } from "./doc-snippets.js";

// The README's first agent, as written: it must print the answer, and show the error and exit
// non-zero when there is one (a missing key looked like success when it printed event names).

const [firstAgent] = snippetsOf("README.md").filter((snippet) => snippet.marker.startsWith("<!-- runs offline: exits 1"));
const fixture = loadFixture("chat-text-usage-1");
const reply = (fixture.chunks as { choices: { delta?: { content?: string | null } }[] }[])
  .flatMap((chunk) => chunk.choices.map((choice) => choice.delta?.content ?? ""))
  .join("");

describe("README's first agent", () => {
  let server: ReplayServer;
  let file: string;
  beforeAll(async () => {
    mkdirSync(path.join(root, ".snippets"), { recursive: true });
    // A file of its own: snippets.test.ts writes the README's blocks beside it meanwhile.
    file = path.join(root, ".snippets", "first-agent.ts");
    writeFileSync(file, firstAgent!.source);
    server = await startReplayServer([{ kind: "fixture", fixture }]);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(file, { force: true });
  });

  it("without a key, prints the error and exits 1", async () => {
    const { code, stdout, stderr } = await runWithTsx(file);
    expect({ code, stdout }).toStrictEqual({ code: 1, stdout: "" });
    expect(stderr).toMatch(/^\nError: .*Missing credentials/);
  }, 60_000);

  it("with a server, prints the answer as it streams and exits 0", async () => {
    const { code, stdout, stderr } = await runWithTsx(file, { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.baseURL });
    expect({ code, stdout, stderr }).toStrictEqual({ code: 0, stdout: `${reply}\n`, stderr: "" });
  }, 60_000);
});
