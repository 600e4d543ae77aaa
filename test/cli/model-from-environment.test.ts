import { describe, expect, it } from "vitest";
import { ModelChoiceError, modelFromEnvironment } from "../../src/cli/model-from-environment.js";
import { startCli, demoEnvironment } from "./cli-process.js";

describe("modelFromEnvironment", () => {
  it("uses the demo model without OpenAI settings", async () => {
    const choice = await modelFromEnvironment({ environment: {} });
    expect([choice.isDemo, choice.model.id, choice.description]).toStrictEqual([true, "rxagent-demo", expect.stringMatching(/offline demo model/)]);
    expect((await modelFromEnvironment({ environment: { OPENAI_API_KEY: "  " } })).isDemo).toBe(true);
  });

  it("uses the OpenAI provider with a key or a base URL", async () => {
    const chat = await modelFromEnvironment({ environment: { OPENAI_API_KEY: "sk-test" } });
    expect([chat.isDemo, chat.model.id, chat.model.api, chat.description]).toStrictEqual([false, "gpt-4o-mini", "openai-completions", "gpt-4o-mini via the OpenAI Chat Completions API."]);
    const local = await modelFromEnvironment({ environment: { OPENAI_BASE_URL: "http://localhost:11434/v1" }, modelName: "llama3.2", api: "responses" });
    expect([local.model.id, local.description]).toStrictEqual(["llama3.2", "llama3.2 via the OpenAI Responses API at http://localhost:11434/v1."]);
    expect((await modelFromEnvironment({ environment: { OPENAI_API_KEY: "sk-test" }, forceDemo: true })).isDemo).toBe(true);
  });

  it("refuses a model asked for by name without a key, naming the variables and --demo", async () => {
    const refusal = modelFromEnvironment({ environment: { OPENAI_API_KEY: " " }, modelName: "gpt-4o-mini" });
    await expect(refusal).rejects.toThrow(ModelChoiceError);
    await expect(refusal).rejects.toThrow(/--model gpt-4o-mini needs OPENAI_API_KEY \(or OPENAI_BASE_URL .*--demo/);
    expect((await modelFromEnvironment({ environment: {}, modelName: "gpt-4o-mini", forceDemo: true })).isDemo).toBe(true);
  });

  it("the CLI exits 2 on --model without a key, before any run, and says what to set", async () => {
    const cli = startCli(["chat", "--model", "gpt-4o-mini"], { environment: demoEnvironment() });
    cli.child.stdin.end("hello\n");
    expect(await cli.exited).toBe(2);
    expect([cli.stdout(), cli.stderr()]).toStrictEqual([
      "",
      "rxagent: --model gpt-4o-mini needs OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server such as Ollama) in the environment; --demo uses the offline demo model instead.\nRun rxagent --help for the options.\n",
    ]);
  });

  it("the CLI reports an unreachable server as a model error and goes on", async () => {
    const cli = startCli(["chat", "--model", "local-model"], { environment: demoEnvironment({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }) });
    cli.child.stdin.end("hello\n");
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toMatch(/^rxagent · local-model via the OpenAI Chat Completions API at http:\/\/127\.0\.0\.1:9\/v1\./);
    expect(cli.stdout()).toMatch(/✗ model error: .+\n· 1 model call/);
  });
});
