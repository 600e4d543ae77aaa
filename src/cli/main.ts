#!/usr/bin/env node
import { existsSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { importPeer } from "./import-peer.js";
import { modelFromEnvironment, defaultModelName, ModelChoiceError, type ModelChoice } from "./model-from-environment.js";
import { piAiModelChoice } from "./pi-ai-model-choice.js";

const usage = `rxagent: LLM agents as a reactive stream.

Usage:
  rxagent [chat] [prompt...]   chat in the terminal (what \`npm start\` runs)
  rxagent serve                the browser UI over a WebSocket
  rxagent replay <file>        replay a session recorded with --record, offline

Options:
  --model <name>      model for the OpenAI provider (default ${defaultModelName}), or for --provider
  --provider <name>   a pi-ai provider (anthropic, google, groq, xai, openrouter, mistral, ...);
                      its key comes from its usual variable (ANTHROPIC_API_KEY, GEMINI_API_KEY, ...)
  --base-url <url>    with --provider: send its requests here (a proxy or a local server)
  --api chat|responses  which OpenAI API (default chat)
  --demo              use the offline demo model even when OPENAI_API_KEY is set
  --delay <ms>        the demo model's time per token (default 25; env RXAGENT_DEMO_DELAY)
  --root <dir>        the only folder the file tools may read and, once approved, write in (default: the current one;
                      replay: the one the cassette was recorded with)
  --json              chat: print the raw events as JSON Lines on stdout
  --record <file>     chat: record every model call to a cassette (JSON Lines; docs/cassettes.md);
                      its folder is made if missing
  --eager-tools       chat: start each tool call as soon as its arguments are complete, while the
                      model still writes the rest of its message
  --otel              chat, serve: print every run's OpenTelemetry spans on stderr, or send them
                      to OTEL_EXPORTER_OTLP_ENDPOINT when it is set (docs/otel.md)
  --speed <n>         replay: play the recorded replies n times as fast (default 1; 0: at once)
  --port <n>          serve: port (default 8787)
  --host <addr>       serve: address (default 127.0.0.1, this machine only)
  --token <secret>    serve: clients must present it (env RXAGENT_TOKEN); the page URL carries it
  --allow-origin <o>  serve: another origin whose pages may connect (repeatable)
  --insecure          serve: allow a non-loopback --host without a token
  --store <dir>       serve: keep each session's transcript in <dir>/<session>.jsonl and reopen it
                      after a restart (calls waiting for approval wait again)
  --redis <url>       serve: share sessions with other serve processes through Redis (redis://host:port)
  --ai-sdk            serve: also answer the AI SDK's useChat at /api/chat (docs/ai-sdk.md)
  --lease <ms>        serve --redis: a run's lease; a dead process's run is taken over after it (default 10000)
  --mcp "<command>"   add the tools of an MCP server started with this command line (stdio;
                      repeatable), e.g. --mcp "npx -y @modelcontextprotocol/server-everything"
  --mcp-url <url>     add the tools of an MCP server at this Streamable HTTP URL (repeatable)
  -h, --help          this help

Model: --provider and --model pick any pi-ai provider (the optional @mariozechner/pi-ai);
OPENAI_API_KEY or OPENAI_BASE_URL (any compatible server: Ollama, vLLM, llama.cpp) selects
the OpenAI provider; otherwise the offline demo model answers.
In the chat, type while the agent works to steer it; /later queues a follow-up; Ctrl-C aborts.`;

/** Reasons to stop before starting, shown with the usage. */
class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: "string" },
      provider: { type: "string" },
      "base-url": { type: "string" },
      api: { type: "string" },
      demo: { type: "boolean" },
      delay: { type: "string" },
      root: { type: "string" },
      json: { type: "boolean" },
      record: { type: "string" },
      "eager-tools": { type: "boolean" },
      otel: { type: "boolean" },
      speed: { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      token: { type: "string" },
      "allow-origin": { type: "string", multiple: true },
      insecure: { type: "boolean" },
      store: { type: "string" },
      redis: { type: "string" },
      lease: { type: "string" },
      "ai-sdk": { type: "boolean" },
      mcp: { type: "string", multiple: true },
      "mcp-url": { type: "string", multiple: true },
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
  const root = checkedRoot(values.root ?? process.cwd());
  const choice =
    values.provider !== undefined && !values.demo
      ? await piAiModelChoice({ provider: values.provider, modelId: values.model, ...(values["base-url"] === undefined ? {} : { baseUrl: values["base-url"] }) })
      : await modelFromEnvironment({
          environment: process.env,
          api,
          demoDelay: delay,
          ...(values.model === undefined ? {} : { modelName: values.model }),
          ...(values.demo ? { forceDemo: true } : {}),
        });
  // The calculator shows its steps at a few tokens' pace, so its progress is visible too.
  const toolStepDelay = delay * 6;
  const mcp = await mcpServers(values.mcp ?? [], values["mcp-url"] ?? [], root, toolStepDelay);

  if (values.record !== undefined && command !== "chat") throw new UsageError("--record works with chat.");
  if (values.lease !== undefined && (command !== "serve" || values.redis === undefined)) throw new UsageError("--lease works with serve --redis.");
  if (values["ai-sdk"] && command !== "serve") throw new UsageError("--ai-sdk works with serve.");
  if (values.store !== undefined && values.redis !== undefined) throw new UsageError("--store and --redis exclude each other: with --redis the transcripts live in Redis.");
  const telemetry = values.otel ? await (await import("./console-telemetry.js")).consoleTelemetry((line) => process.stderr.write(line), process.env.OTEL_EXPORTER_OTLP_ENDPOINT) : undefined;
  if (telemetry) flushBeforeExit = telemetry.flush;
  const instrument = telemetry?.instrument;
  if (command === "chat") {
    const { runChat } = await import("./chat-command.js");
    const initialPrompt = rest.join(" ").trim();
    const recording = values.record === undefined ? undefined : await recordTo(values.record, choice, root);
    return runChat({
      choice: recording?.choice ?? choice,
      root,
      json: values.json === true,
      toolStepDelay,
      ...(values["eager-tools"] ? { eagerTools: true } : {}),
      ...(instrument ? { instrument } : {}),
      ...(mcp ? { tools: mcp.tools } : {}),
      ...(initialPrompt === "" ? {} : { initialPrompt }),
      input: process.stdin,
      output: process.stdout,
      errorOutput: process.stderr,
      color: process.stdout.isTTY === true && !values.json && process.env["NO_COLOR"] === undefined,
    }).finally(() => {
      recording?.sink.close();
      return mcp?.close();
    });
  }
  if (command === "replay") {
    const [file, ...extra] = rest;
    if (file === undefined || extra.length > 0) throw new UsageError("replay takes one cassette file: rxagent replay <file>.");
    if (!existsSync(file)) throw new UsageError(`${file} does not exist.`);
    const { readCassette } = await import("../testing/node/index.js");
    const { runReplay } = await import("./replay-command.js");
    const speed = numberOption("--speed", values.speed, 1);
    const cassette = readCassette(file);
    return runReplay({
      cassette,
      file,
      root: values.root === undefined ? recordedRoot(cassette.metadata?.["root"]) ?? root : root,
      toolStepDelay,
      speed: speed === 0 ? Infinity : speed,
      json: values.json === true,
      output: process.stdout,
      errorOutput: process.stderr,
      color: process.stdout.isTTY === true && !values.json && process.env["NO_COLOR"] === undefined,
    });
  }
  if (command === "serve") {
    // Listening before the URL is printed: until a listener exists, SIGINT kills the process outright.
    const stopped = new Promise<void>((resolve) => process.once("SIGINT", () => resolve()).once("SIGTERM", () => resolve()));
    const { runServe } = await importPeer(() => import("./serve-command.js"), "ws", "rxagent serve");
    const close = await runServe({
      choice,
      ...(instrument ? { instrument } : {}),
      root,
      toolStepDelay,
      ...(mcp ? { tools: mcp.tools } : {}),
      port: numberOption("--port", values.port, 8787),
      host: values.host ?? "127.0.0.1",
      ...(values.store === undefined ? {} : { storeDirectory: values.store }),
      output: process.stdout,
      ...serveSecurity(values.token ?? process.env["RXAGENT_TOKEN"], values["allow-origin"], values.insecure === true),
      ...(values.redis === undefined ? {} : { redis: values.redis }),
      ...(values["ai-sdk"] ? { aiSdk: true } : {}),
      ...(values.lease === undefined ? {} : { leaseMs: numberOption("--lease", values.lease, 10_000) }),
    });
    await stopped;
    await close();
    await mcp?.close();
    return 0;
  }
  throw new UsageError(`Unknown command "${command}".`);
}

function checkedRoot(folder: string): string {
  const root = path.resolve(folder);
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new UsageError(`--root ${root} is not a folder.`);
  return root;
}

/**
 * The `--root` a cassette was recorded with: the file tools' descriptions name it, so a replay
 * elsewhere would differ from the recording at the first call.
 */
function recordedRoot(root: string | undefined): string | undefined {
  if (root === undefined) return undefined;
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new UsageError(`This cassette was recorded with --root ${root}, which is not a folder here: pass --root <dir> with the same files.`);
  }
  return root;
}

/**
 * Wraps the chosen model so every call is written to `file` as it happens, with `root` in the
 * cassette's header for the replay. The file's folder is made if missing.
 */
async function recordTo(file: string, choice: ModelChoice, root: string): Promise<{ choice: ModelChoice; sink: { close(): void } }> {
  const { recordingModel } = await import("../testing/recording-model.js");
  const { cassetteFileSink } = await import("../testing/node/index.js");
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const sink = cassetteFileSink(file);
  // Every provider reads its key from a variable of its own (OPENAI_API_KEY, ANTHROPIC_API_KEY, …): redact them all.
  const secrets = Object.entries(process.env)
    .filter(([name]) => /(API_KEY|TOKEN|SECRET|SECRET_ACCESS_KEY|PASSWORD)$/.test(name))
    .map(([, value]) => value)
    .filter((secret): secret is string => secret !== undefined && secret.trim().length >= 8);
  const model = recordingModel(choice.model, { sink, secrets, metadata: { root } });
  return { choice: { ...choice, model, description: `${choice.description} Recording to ${file}.` }, sink };
}

/** The demo tools plus those of the `--mcp` / `--mcp-url` servers, when any are given. */
async function mcpServers(commandLines: string[], urls: string[], root: string, stepDelay: number) {
  if (commandLines.length === 0 && urls.length === 0) return undefined;
  const [{ connectMcpServers }, { demoTools }] = await Promise.all([import("./mcp-servers.js"), import("../demo/demo-tools.js")]);
  return connectMcpServers({ commandLines, urls, tools: demoTools({ root, stepDelay }), output: process.stderr });
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

/** `--otel` with OTLP: spans still on their way to the collector, sent before the process exits. */
let flushBeforeExit: () => Promise<void> = () => Promise.resolve();

/** Exits once the spans are sent and stdout has taken everything written to it (a pipe may still be draining). */
function exit(code: number): void {
  const flushed = flushBeforeExit().catch((error: unknown) => {
    process.stderr.write(`rxagent: spans not sent: ${(error as Error).message}\n`);
  });
  void flushed.then(() => process.stdout.write("", () => process.exit(code)));
}

main(process.argv.slice(2)).then(exit, (error: unknown) => {
  const usageProblem = error instanceof UsageError || error instanceof ModelChoiceError || (error as { code?: unknown }).code?.toString().startsWith("ERR_PARSE_ARGS");
  process.stderr.write(`rxagent: ${(error as Error).message}\n${usageProblem ? "Run rxagent --help for the options.\n" : ""}`);
  exit(usageProblem ? 2 : 1);
});
