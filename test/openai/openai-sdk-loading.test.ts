import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { repositoryRoot } from "../cli/cli-process.js";
import { FRESH_PROCESS_TIMEOUT_MS, runScript, sourceUrl } from "../helpers/fresh-process.js";

// The SDK loads at a model's first call, which only a fresh process shows: every other test file
// here has `openai` loaded already.

const helperUrl = (file: string): string => JSON.stringify(pathToFileURL(path.join(repositoryRoot, "test", "helpers", file)).href);

/** Script lines that record every module the script loads from then on, in `urls`. */
const recordModules = `
const { register } = await import("node:module");
const urls = new Set();
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => urls.add(url));
register("data:text/javascript," + encodeURIComponent(
  "let port; export function initialize(data) { port = data.port; }" +
  "export async function resolve(specifier, context, next) { const resolved = await next(specifier, context); port.postMessage(resolved.url); return resolved; }"),
  import.meta.url, { data: { port: port2 }, transferList: [port2] });
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));
const sdkModules = () => [...urls].filter((url) => url.includes("/node_modules/openai/")).length;
`;

describe("rxagent/openai loads the openai SDK at a model's first call", { timeout: FRESH_PROCESS_TIMEOUT_MS }, () => {
  it("imports and makes models with only the SDK's error classes loaded; the first call loads the SDK and streams", () => {
    const result = runScript(`${recordModules}
const { lastValueFrom, toArray } = await import("rxjs");
const { loadFixture } = await import(${helperUrl("openai-fixtures.ts")});
const { startReplayServer } = await import(${helperUrl("sse-replay-server.ts")});
const server = await startReplayServer([{ kind: "fixture", fixture: loadFixture("chat-text-usage-1") }]);
await settle();
const before = sdkModules();
const { openaiChat, openaiResponses, isTransientError } = await import(${sourceUrl("openai/index.ts")});
const chat = openaiChat({ model: "gpt-4.1-nano", apiKey: "sk-test", baseURL: server.baseURL, maxRetries: 0 });
openaiResponses({ model: "gpt-5-mini", apiKey: "sk-test", baseURL: server.baseURL });
const { RateLimitError } = await import("openai/core/error");
const transient = isTransientError(new RateLimitError(429, undefined, "slow down", new Headers()));
await settle();
console.log("SDK modules at import:", sdkModules() - before, "transient 429:", transient);
const events = await lastValueFrom(chat.stream({ messages: [{ role: "user", content: "Hi", timestamp: 0 }] }, { signal: new AbortController().signal }).pipe(toArray()));
await settle();
console.log("SDK loaded by the call:", sdkModules() - before > 100, "last event:", events.at(-1).type, events.at(-1).message.stopReason);
await server.close();
port1.close();
`);
    expect(result).toStrictEqual({ status: 0, stderr: "", stdout: "SDK modules at import: 2 transient 429: true\nSDK loaded by the call: true last event: done stop\n" });
  });

  it("a call whose SDK cannot be loaded ends with an error event that names npm i openai", () => {
    const result = runScript(`
const { register } = await import("node:module");
// Only the package's main entry fails, as in an install that lost its files.
register("data:text/javascript," + encodeURIComponent(
  "export async function resolve(specifier, context, next) {" +
  "  if (specifier === 'openai') throw Object.assign(new Error(\\"Cannot find package 'openai'\\"), { code: 'ERR_MODULE_NOT_FOUND' });" +
  "  return next(specifier, context); }"), import.meta.url);
const { lastValueFrom, toArray } = await import("rxjs");
const { openaiChat } = await import(${sourceUrl("openai/index.ts")});
const model = openaiChat({ model: "gpt-4.1-nano", apiKey: "sk-test", baseURL: "http://127.0.0.1:9/v1", maxRetries: 0 });
const events = await lastValueFrom(model.stream({ messages: [{ role: "user", content: "Hi", timestamp: 0 }] }, { signal: new AbortController().signal }).pipe(toArray()));
console.log(JSON.stringify(events.map((event) => event.type)), events.at(-1).error.errorMessage);
`);
    expect(result).toStrictEqual({
      status: 0,
      stderr: "",
      stdout: `["start","error"] rxagent/openai could not load the package "openai" (npm i openai): Cannot find package 'openai'\n`,
    });
  });
});
