import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { replayInputs } from "../../src/cli/replay-inputs.js";
import { readCassette } from "../../src/testing/node/index.js";
import { loadFixture } from "../helpers/openai-fixtures.js";
import { startReplayServer } from "../helpers/sse-replay-server.js";
import { demoEnvironment, startCli } from "./cli-process.js";

const cassetteFile = () => path.join(mkdtempSync(path.join(tmpdir(), "rxagent-replay-")), "session.cassette.jsonl");
/** The screen without its first line, the banner (which names the model or the cassette). */
const screenBody = (stdout: string) => stdout.trimEnd().split("\n").slice(1);

describe("rxagent chat --record, then rxagent replay (real processes on the demo model)", () => {
  it("replays a session with parallel tool calls offline and prints the same screen", async () => {
    const file = cassetteFile();
    const chat = startCli(["chat", "--delay", "0", "--record", file]);
    chat.child.stdin.end("what is 12*7 and what is 3+4\n");
    expect(await chat.exited).toBe(0);
    expect(chat.stdout().split("\n")[0]).toMatch(new RegExp(`^rxagent · the offline demo model.* Recording to ${file}\\.$`));

    const replay = startCli(["replay", file, "--speed", "0", "--delay", "0"]);
    expect(await replay.exited).toBe(0);
    expect(replay.stdout().split("\n")[0]).toBe(`rxagent · replaying ${file} (rxagent-demo via rxagent, 2 model calls)`);
    expect(screenBody(replay.stdout())).toStrictEqual(screenBody(chat.stdout()));
    expect(screenBody(replay.stdout())).toStrictEqual([
      "› what is 12*7 and what is 3+4",
      'thinking: "12*7" is arithmetic → calculator.',
      '"3+4" is arithmetic → calculator.',
      "2 independent calls: I send them together so they run in parallel.",
      "Let me check those at once.",
      '⚙ calculator expression="12*7"',
      "  ✓ 12*7 = 84",
      '⚙ calculator expression="3+4"',
      "  ✓ 3+4 = 7",
      "Here is what I found:",
      "- 12*7 = 84.",
      "- 3+4 = 7.",
      expect.stringMatching(/^· 2 model calls · \d+ in \/ \d+ out tokens$/),
    ]);
  });

  it("types the recorded lines again: a line typed mid-run steers the replay before the same model call", async () => {
    const file = cassetteFile();
    // The steering line goes in as the first reply starts, about 1 s before the run asks the
    // model again (see chat-process.test.ts: 90 ms was too little under CI's load).
    const chat = startCli(["chat", "--delay", "40", "--record", file]);
    chat.child.stdin.write("what is (1+2)*(3+4)\n");
    await chat.waitFor((stdout) => stdout.includes("Let me"));
    chat.child.stdin.write("also what is 5*5\n");
    await chat.waitFor((stdout) => /model calls · /.test(stdout));
    chat.child.stdin.end("what is 2+2\n");
    expect(await chat.exited).toBe(0);
    expect(replayInputs(readCassette(file))).toStrictEqual([
      { kind: "prompt", text: "what is (1+2)*(3+4)", beforeCall: 0 },
      { kind: "steer", text: "also what is 5*5", beforeCall: 1 },
      { kind: "prompt", text: "what is 2+2", beforeCall: 3 },
    ]);

    const replay = startCli(["replay", file, "--delay", "5"]);
    expect(await replay.exited).toBe(0);
    expect(screenBody(replay.stdout())).toStrictEqual(screenBody(chat.stdout()));
  });

  it("shows a request that no longer matches the recording as a model error with the differences", async () => {
    const file = cassetteFile();
    const chat = startCli(["chat", "--delay", "0", "--record", file]);
    chat.child.stdin.end("what is 6*7\n");
    expect(await chat.exited).toBe(0);
    // As if the calculator had answered differently when the session was recorded.
    writeFileSync(file, readFileSync(file, "utf8").replace('"text":"6*7 = 42"', '"text":"6*7 = 41"'));
    const replay = startCli(["replay", file, "--speed", "0", "--delay", "0"]);
    expect(await replay.exited).toBe(0);
    expect(screenBody(replay.stdout())).toStrictEqual([
      "› what is 6*7",
      'thinking: "6*7" is arithmetic → calculator.',
      "Let me use the calculator tool.",
      '⚙ calculator expression="6*7"',
      "  ✓ 6*7 = 42",
      "✗ model error: cassetteModel: call #2 differs from the recording:",
      '- messages[2].content[0].text: recorded "6*7 = 41", sent "6*7 = 42"',
      expect.stringMatching(/^· 2 model calls · \d+ in \/ \d+ out tokens$/),
    ]);
  });

  it("records a session with an OpenAI-compatible server without its API key, and replays it offline", async () => {
    const apiKey = "team-key-7c1d9e2f";
    const server = await startReplayServer([
      { kind: "fixture", fixture: loadFixture("chat-text-usage-2") },
      { kind: "http-error", status: 401, body: { error: { message: `Incorrect API key provided: ${apiKey}.`, code: "invalid_api_key" } } },
    ]);
    const file = cassetteFile();
    try {
      const chat = startCli(["chat", "--model", "gpt-4o", "--record", file], {
        environment: demoEnvironment({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: apiKey }),
      });
      chat.child.stdin.write("weather in San Francisco?\n");
      await chat.waitFor((stdout) => /model call · /.test(stdout));
      chat.child.stdin.end("and now?\n");
      expect(await chat.exited).toBe(0);
      expect(server.requests.map((request) => request.headers.authorization)).toStrictEqual([`Bearer ${apiKey}`, `Bearer ${apiKey}`]);
      expect(readFileSync(file, "utf8")).not.toContain(apiKey);

      const replay = startCli(["replay", file, "--speed", "0"]);
      expect(await replay.exited).toBe(0);
      expect(replay.stdout().split("\n")[0]).toBe(`rxagent · replaying ${file} (gpt-4o via openai, 2 model calls)`);
      const redacted = screenBody(chat.stdout()).map((line) => line.replace(apiKey, "[redacted]"));
      expect(screenBody(replay.stdout())).toStrictEqual(redacted);
      expect(redacted).toContain("✗ model error: 401 Incorrect API key provided: [redacted].");
    } finally {
      await server.close();
    }
  });

  it("refuses a missing cassette and --record outside chat", async () => {
    const missing = startCli(["replay", "no-such.cassette.jsonl"]);
    expect(await missing.exited).toBe(2);
    expect(missing.stderr()).toBe("rxagent: no-such.cassette.jsonl does not exist.\nRun rxagent --help for the options.\n");
    const serve = startCli(["serve", "--record", "x.jsonl"]);
    expect(await serve.exited).toBe(2);
    expect(serve.stderr()).toBe("rxagent: --record works with chat.\nRun rxagent --help for the options.\n");
  });

  it("--record makes its folder and keeps --root in the cassette; replay uses that root without being told", async () => {
    const folder = mkdtempSync(path.join(tmpdir(), "rxagent-replay-"));
    const root = path.join(folder, "project");
    mkdirSync(root);
    writeFileSync(path.join(root, "notes.txt"), "hello\n");
    const file = path.join(folder, "not", "yet", "session.cassette.jsonl");
    const chat = startCli(["chat", "--delay", "0", "--root", root, "--record", file]);
    chat.child.stdin.end("what is 6*7\n");
    expect(await chat.exited).toBe(0);
    expect(readCassette(file).metadata).toStrictEqual({ root });

    const replay = startCli(["replay", file, "--speed", "0", "--delay", "0"]);
    expect(await replay.exited).toBe(0);
    expect(screenBody(replay.stdout())).toStrictEqual(screenBody(chat.stdout()));
    expect(replay.stdout()).not.toMatch(/differs from the recording/);

    // Moved to a machine without that folder: the replay says what it needs.
    writeFileSync(file, readFileSync(file, "utf8").replace(JSON.stringify(root), JSON.stringify(path.join(folder, "gone"))));
    const elsewhere = startCli(["replay", file, "--speed", "0"]);
    expect(await elsewhere.exited).toBe(2);
    expect(elsewhere.stderr()).toBe(
      `rxagent: This cassette was recorded with --root ${path.join(folder, "gone")}, which is not a folder here: pass --root <dir> with the same files.\nRun rxagent --help for the options.\n`,
    );
  });
});
