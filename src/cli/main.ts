#!/usr/bin/env node
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { modelFromEnvironment, defaultModelName } from "./model-from-environment.js";

const usage = `rxagent: LLM agents as a reactive stream.

Usage:
  rxagent [chat] [prompt...]   chat in the terminal (what \`npm start\` runs)
  rxagent serve                the browser UI over a WebSocket

Options:
  --model <name>      model for the OpenAI provider (default ${defaultModelName})
  --api chat|responses  which OpenAI API (default chat)
  --demo              use the offline demo model even when OPENAI_API_KEY is set
  --delay <ms>        the demo model's time per token (default 25; env RXAGENT_DEMO_DELAY)
  --root <dir>        the only folder the file tools may read (default: the current one)
  --json              chat: print the raw events as JSON Lines on stdout
  --port <n>          serve: port (default 8787)
  --host <addr>       serve: address (default 127.0.0.1, this machine only)
  --token <secret>    serve: clients must present it (env RXAGENT_TOKEN); the page URL carries it
  --allow-origin <o>  serve: another origin whose pages may connect (repeatable)
  --insecure          serve: allow a non-loopback --host without a token
  -h, --help          this help

Model: OPENAI_API_KEY or OPENAI_BASE_URL (any compatible server: Ollama, vLLM, llama.cpp)
selects the OpenAI provider; otherwise the offline demo model answers.
In the chat, type while the agent works to steer it; /later queues a follow-up; Ctrl-C aborts.`;

/** Reasons to stop before starting, shown with the usage. */
class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: "string" },
      api: { type: "string" },
      demo: { type: "boolean" },
      delay: { type: "string" },
      root: { type: "string" },
      json: { type: "boolean" },
      port: { type: "string" },
      host: { type: "string" },
      token: { type: "string" },
      "allow-origin": { type: "string", multiple: true },
      insecure: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const [command = "chat", ...rest] = positionals;
  const api = values.api ?? "chat";
  if (api !== "chat" && api !== "responses") throw new UsageError(`--api must be "chat" or "responses", not "${api}".`);
  const delay = numberOption("--delay", values.delay ?? process.env["RXAGENT_DEMO_DELAY"], 25);
  const root = path.resolve(values.root ?? process.cwd());
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new UsageError(`--root ${root} is not a folder.`);
  const choice = modelFromEnvironment({
    environment: process.env,
    api,
    demoDelay: delay,
    ...(values.model === undefined ? {} : { modelName: values.model }),
    ...(values.demo ? { forceDemo: true } : {}),
  });
  // The calculator shows its steps at a few tokens' pace, so its progress is visible too.
  const toolStepDelay = delay * 6;

  if (command === "chat") {
    const { runChat } = await import("./chat-command.js");
    const initialPrompt = rest.join(" ").trim();
    return runChat({
      choice,
      root,
      json: values.json === true,
      toolStepDelay,
      ...(initialPrompt === "" ? {} : { initialPrompt }),
      input: process.stdin,
      output: process.stdout,
      errorOutput: process.stderr,
      color: process.stdout.isTTY === true && !values.json && process.env["NO_COLOR"] === undefined,
    });
  }
  if (command === "serve") {
    const { runServe } = await import("./serve-command.js");
    const close = await runServe({
      choice,
      root,
      toolStepDelay,
      port: numberOption("--port", values.port, 8787),
      host: values.host ?? "127.0.0.1",
      output: process.stdout,
      ...serveSecurity(values.token ?? process.env["RXAGENT_TOKEN"], values["allow-origin"], values.insecure === true),
    });
    await new Promise<void>((resolve) => process.once("SIGINT", () => resolve()).once("SIGTERM", () => resolve()));
    await close();
    return 0;
  }
  throw new UsageError(`Unknown command "${command}".`);
}

function numberOption(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) throw new UsageError(`${name} must be a number of at least 0, not "${value}".`);
  return number;
}

/** The serve options for --token (or RXAGENT_TOKEN), --allow-origin and --insecure. */
function serveSecurity(token: string | undefined, allowOrigins: string[] | undefined, insecure: boolean) {
  if (token === "") throw new UsageError("--token must not be empty.");
  return {
    ...(token === undefined ? {} : { token }),
    ...(allowOrigins === undefined ? {} : { allowOrigins }),
    insecure,
  };
}

/** Exits once stdout has taken everything written to it (a pipe may still be draining). */
function exit(code: number): void {
  process.stdout.write("", () => process.exit(code));
}

main(process.argv.slice(2)).then(exit, (error: unknown) => {
  const usageProblem = error instanceof UsageError || (error as { code?: unknown }).code?.toString().startsWith("ERR_PARSE_ARGS");
  process.stderr.write(`rxagent: ${(error as Error).message}\n${usageProblem ? "Run rxagent --help for the options.\n" : ""}`);
  exit(usageProblem ? 2 : 1);
});
