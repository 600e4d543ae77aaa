import { afterEach, describe, expect, it, vi } from "vitest";
import { ModelChoiceError } from "../../src/cli/model-from-environment.js";
import { piAiModelChoice } from "../../src/cli/pi-ai-model-choice.js";
import { loadProviderFixture, providerFrames } from "../helpers/provider-fixtures.js";
import { startReplayServer } from "../helpers/sse-replay-server.js";
import { demoEnvironment, startCli } from "./cli-process.js";

afterEach(() => vi.unstubAllEnvs());

describe("piAiModelChoice (--provider)", () => {
  it("builds a pi-ai model with the key from the provider's usual variable", async () => {
    vi.stubEnv("ANTHROPIC_OAUTH_TOKEN", "");
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-test");
    const choice = await piAiModelChoice({ provider: "anthropic", modelId: "claude-sonnet-4-5" });
    expect([choice.isDemo, choice.model.id, choice.model.provider, choice.model.api, choice.description]).toStrictEqual([
      false,
      "claude-sonnet-4-5",
      "anthropic",
      "anthropic-messages",
      "Claude Sonnet 4.5 (latest) (anthropic/claude-sonnet-4-5) via pi-ai.",
    ]);
    vi.stubEnv("GEMINI_API_KEY", "gemini-test");
    const gemini = await piAiModelChoice({ provider: "google", modelId: "gemini-2.5-pro", baseUrl: "http://127.0.0.1:9" });
    expect([gemini.model.api, gemini.description]).toStrictEqual(["google-generative-ai", "Gemini 2.5 Pro (google/gemini-2.5-pro) via pi-ai at http://127.0.0.1:9."]);
  });

  it("says what to fix: an unknown provider, no --model, an unknown model, no key", async () => {
    vi.stubEnv("GROQ_API_KEY", "");
    const problems = await Promise.all(
      [
        { provider: "anthropics", modelId: "x" },
        { provider: "anthropic", modelId: undefined },
        { provider: "anthropic", modelId: "claude-99" },
        { provider: "groq", modelId: "llama-3.3-70b-versatile" },
      ].map((options) => piAiModelChoice(options).then(() => "resolved", (error: unknown) => error)),
    );
    for (const problem of problems) expect(problem).toBeInstanceOf(ModelChoiceError);
    expect(problems.map((problem) => (problem as Error).message)).toStrictEqual([
      expect.stringMatching(/^Unknown provider "anthropics"\. pi-ai knows: .*anthropic, .*google.*\.$/),
      expect.stringMatching(/^--provider anthropic needs --model <id>, e\.g\. one of: claude-.*\(\d+ in all\)\.$/),
      expect.stringMatching(/^Unknown model "claude-99" for anthropic\. Known: claude-/),
      "No API key for groq: set GROQ_API_KEY in the environment.",
    ]);
  });
});

describe("rxagent chat --provider (a real process, pi-ai's Anthropic provider against a replayed recording)", () => {
  it("answers through the provider, reading ANTHROPIC_API_KEY", async () => {
    const server = await startReplayServer([{ kind: "frames", frames: providerFrames(loadProviderFixture("anthropic", "text-1")) }]);
    try {
      const origin = server.baseURL.replace(/\/v1$/, "");
      const cli = startCli(["chat", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--base-url", origin], {
        environment: demoEnvironment({ ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_OAUTH_TOKEN: "" }),
      });
      cli.child.stdin.end("hello\n");
      expect(await cli.exited).toBe(0);
      expect(cli.stdout().trimEnd().split("\n")).toStrictEqual([
        `rxagent · Claude Sonnet 4.5 (latest) (anthropic/claude-sonnet-4-5) via pi-ai at ${origin}.`,
        "› hello",
        "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
        // Claude Sonnet 4.5 at $3 / $15 per million tokens: 12 × 3 + 30 × 15 = 486 millionths of a dollar.
        "· 1 model call · 12 in / 30 out tokens · $0.0005",
      ]);
      expect([server.requests[0]!.url, server.requests[0]!.headers["x-api-key"]]).toStrictEqual(["/v1/messages", "sk-ant-test"]);
    } finally {
      await server.close();
    }
  });

  it("without a key it exits 2 naming the variable; --help lists --provider", async () => {
    const cli = startCli(["chat", "--provider", "anthropic", "--model", "claude-sonnet-4-5"], {
      environment: demoEnvironment({ ANTHROPIC_API_KEY: "", ANTHROPIC_OAUTH_TOKEN: "" }),
    });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe("rxagent: No API key for anthropic: set ANTHROPIC_API_KEY in the environment.\nRun rxagent --help for the options.\n");
    const help = startCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toMatch(/\n {2}--provider <name> {3}a pi-ai provider \(anthropic, google/);
  });
});
