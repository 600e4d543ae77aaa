import { describe, expect, it } from "vitest";
import { FRESH_PROCESS_TIMEOUT_MS, runScript, sourceUrl } from "../helpers/fresh-process.js";

/**
 * The start of a fresh process's script: a loader hook that lists in `urls` every module loaded
 * from then on, then rxagent's loop, `scriptedModel` and rxjs.
 */
const LOADED_URLS = `
const { register } = await import("node:module");
const urls = [];
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => urls.push(url));
register("data:text/javascript," + encodeURIComponent(
  "let port; export function initialize(data) { port = data.port; }" +
  "export async function resolve(specifier, context, next) { const resolved = await next(specifier, context); port.postMessage(resolved.url); return resolved; }"),
  import.meta.url, { data: { port: port2 }, transferList: [port2] });
const { agentLoop, defineTool, textResult, validateArguments } = await import(${sourceUrl("index.ts")});
const { scriptedModel } = await import(${sourceUrl("testing/scripted-model.ts")});
const { lastValueFrom, toArray } = await import("rxjs");
`;

// TypeBox's compiler is loaded on first use, which only a fresh process shows: every test file
// here starts with it loaded (test/helpers/load-validators.ts), as rxagent/testing's users do.

describe("TypeBox's compiler, loaded at the first TypeBox schema that is not plain, or the first call that needs it", { timeout: FRESH_PROCESS_TIMEOUT_MS }, () => {
  it("is not loaded by import('rxagent'), nor is TypeBox; a fresh process's first TypeBox call runs once it arrives, with coercion and defaults", () => {
    const result = runScript(`${LOADED_URLS}
await new Promise((resolve) => setTimeout(resolve, 100));
console.log("typebox modules:", urls.filter((url) => url.includes("/@sinclair/typebox/")).length);
console.log("rxagent modules:", urls.filter((url) => url.includes("/src/")).length > 10);
const { Type } = await import("@sinclair/typebox");
const parameters = Type.Object({ a: Type.Number(), b: Type.Number({ default: 1 }) });
const first = validateArguments("sum", parameters, { a: "2" });
console.log("first answer is an Observable:", typeof first.subscribe === "function");
const sum = defineTool({ name: "sum", description: "", parameters, execute: (_id, args) => textResult(JSON.stringify(args)) });
const model = scriptedModel([{ content: [{ type: "toolCall", name: "sum", arguments: { a: "2" } }] }, "done"]);
const events = await lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [sum] }, { model }).pipe(toArray()));
console.log(JSON.stringify(events.filter((event) => event.type === "tool_execution_end").map((event) => event.result.content)));
console.log("later answers are at once:", typeof validateArguments("sum", parameters, { a: 3 }).subscribe !== "function");
port1.close();
`);
    expect(result).toStrictEqual({
      status: 0,
      stderr: "",
      stdout:
        "typebox modules: 0\nrxagent modules: true\nfirst answer is an Observable: true\n" +
        '[[{"type":"text","text":"{\\"a\\":2,\\"b\\":1}"}]]\nlater answers are at once: true\n',
    });
  });

  it("goes on in the async context of the run that waited for it, not of whoever started the load (OpenTelemetry's active span)", () => {
    const result = runScript(`
import { AsyncLocalStorage } from "node:async_hooks";
import { Type } from "@sinclair/typebox";
import { lastValueFrom } from "rxjs";
const { agentLoop, defineTool, textResult } = await import(${sourceUrl("index.ts")});
const { scriptedModel } = await import(${sourceUrl("testing/scripted-model.ts")});
const storage = new AsyncLocalStorage();
// A string where the schema wants a number: only the compiler converts it, so the call waits for the load.
const echo = defineTool({ name: "echo", description: "", parameters: Type.Object({ n: Type.Number() }), execute: () => textResult("ran") });
const seen = [];
const reply = (context) => {
  seen.push(storage.getStore());
  return context.messages.at(-1).role === "toolResult" ? "done" : { content: [{ type: "toolCall", name: "echo", arguments: { n: "1" } }] };
};
const model = scriptedModel([reply, reply]);
await storage.run("run-1", () => lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [echo] }, { model })));
console.log(JSON.stringify(seen));
`);
    expect(result).toStrictEqual({ status: 0, stderr: "", stdout: '["run-1","run-1"]\n' });
  });

  it("is not loaded for a plain schema whose calls all match it: they are answered at once; the first call that needs it loads it", () => {
    const result = runScript(`${LOADED_URLS}
const { Type } = await import("@sinclair/typebox");
const compilerModules = async () => {
  await new Promise((resolve) => setTimeout(resolve, 100));
  return urls.filter((url) => url.includes("/@sinclair/typebox/build/esm/compiler/") || url.includes("/typebox-validator.")).length;
};
const parameters = Type.Object({ n: Type.Number(), unit: Type.Optional(Type.Union([Type.Literal("c"), Type.Literal("f")])) });
console.log(JSON.stringify(validateArguments("sum", parameters, { n: 1, unit: "c" })));
const sum = defineTool({ name: "sum", description: "", parameters, execute: (_id, args) => textResult(JSON.stringify(args)) });
const model = scriptedModel([{ content: [{ type: "toolCall", name: "sum", arguments: { n: 2 } }] }, "done"]);
const events = await lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [sum] }, { model }).pipe(toArray()));
console.log(JSON.stringify(events.filter((event) => event.type === "tool_execution_end").map((event) => event.result.content)));
console.log("compiler loaded:", (await compilerModules()) > 0);
const converted = validateArguments("sum", parameters, { n: "3" });
console.log("a call to convert waits for it:", typeof converted.subscribe === "function");
console.log(JSON.stringify(await lastValueFrom(converted)));
console.log("compiler loaded:", (await compilerModules()) > 0);
port1.close();
`);
    expect(result).toStrictEqual({
      status: 0,
      stderr: "",
      stdout:
        '{"valid":true,"value":{"n":1,"unit":"c"}}\n[[{"type":"text","text":"{\\"n\\":2}"}]]\ncompiler loaded: false\n' +
        'a call to convert waits for it: true\n{"valid":true,"value":{"n":3}}\ncompiler loaded: true\n',
    });
  });

  it("answers every call that needs it with an error naming the compiler when it cannot be loaded; the run goes on", () => {
    const result = runScript(
      `
import { Type } from "@sinclair/typebox";
import { lastValueFrom, toArray } from "rxjs";
const { agentLoop, defineTool, textResult } = await import(${sourceUrl("index.ts")});
const { scriptedModel } = await import(${sourceUrl("testing/scripted-model.ts")});
// A string where the schema wants a number: only the compiler converts. A call that plainly matches needs no compiler.
const echo = defineTool({ name: "echo", description: "", parameters: Type.Object({ n: Type.Number() }), execute: () => textResult("ran") });
const call = (n) => ({ content: [{ type: "toolCall", name: "echo", arguments: { n } }] });
const model = scriptedModel([call("1"), call("2"), call(3), "done"]);
const events = await lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [echo] }, { model }).pipe(toArray()));
for (const event of events) if (event.type === "tool_execution_end") console.log(event.isError, event.result.content[0].text);
console.log(events.at(-1).type);
`,
      { hide: ["@sinclair/typebox/compiler"] },
    );
    const refused = "true Tool \"echo\" has a TypeBox schema, and its validator (TypeBox's compiler) could not be loaded: Cannot find package '@sinclair/typebox/compiler'";
    expect(result).toStrictEqual({ status: 0, stderr: "", stdout: `${refused}\n${refused}\nfalse ran\nagent_end\n` });
  });

  it("answers at once from the start in a process that imported rxagent/typebox (and rxagent/testing)", () => {
    const result = runScript(`
import { Type } from "@sinclair/typebox";
await import(${sourceUrl("typebox/index.ts")});
const { validateArguments } = await import(${sourceUrl("index.ts")});
console.log(JSON.stringify(validateArguments("sum", Type.Object({ a: Type.Number() }), { a: "2" })));
`);
    expect(result).toStrictEqual({ status: 0, stderr: "", stdout: '{"valid":true,"value":{"a":2}}\n' });
  });
});
