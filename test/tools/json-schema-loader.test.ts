import { build } from "esbuild";
import { firstValueFrom, isObservable } from "rxjs";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/tools/define-tool.js";
import { textResult } from "../../src/tools/tool-results.js";
import { validateArguments } from "../../src/tools/validate-arguments.js";
import { repositoryRoot } from "../cli/cli-process.js";
import { FRESH_PROCESS_TIMEOUT_MS, runScript, sourceUrl } from "../helpers/fresh-process.js";

// This file never imports rxagent/json-schema (vitest gives each file its own modules), so Ajv
// is loaded the lazy way: by the first plain JSON Schema. The tests run in order on that state.

const settled = (validation: ReturnType<typeof validateArguments>) =>
  isObservable(validation) ? firstValueFrom(validation) : Promise.resolve(validation);

describe("Ajv, loaded at the first plain JSON Schema", () => {
  it("lets defineTool accept a schema Ajv will refuse while Ajv loads; its calls then fail naming the reason", async () => {
    const broken = defineTool({ name: "broken", description: "", parameters: { type: 5 }, execute: () => textResult("") });
    const first = validateArguments("broken", broken.parameters, {});
    expect(isObservable(first)).toBe(true);
    expect(await settled(first)).toStrictEqual({
      valid: false,
      message: expect.stringMatching(/^Tool "broken" has parameters that cannot be used as a schema: schema is invalid: data\/type must be/),
    });
  });

  it("validates synchronously once loaded, and defineTool then refuses a broken schema at once", () => {
    const schema = { type: "object", properties: { count: { type: "integer" } } };
    expect(validateArguments("count", schema, { count: "3" })).toStrictEqual({ valid: true, value: { count: 3 } });
    expect(() => defineTool({ name: "broken_later", description: "", parameters: { type: "nope" }, execute: () => textResult("") })).toThrow(
      /^Tool "broken_later" has parameters that cannot be used as a schema: schema is invalid/,
    );
  });
});

describe("a plain JSON Schema tool in a run while Ajv loads", { timeout: FRESH_PROCESS_TIMEOUT_MS }, () => {
  it("runs a fresh process's first JSON Schema call after Ajv arrives, with coercion and defaults", () => {
    const result = runScript(`
import { agentLoop, defineTool, textResult } from ${sourceUrl("index.ts")};
import { scriptedModel } from ${sourceUrl("testing/index.ts")};
import { lastValueFrom, toArray } from "rxjs";
const sum = defineTool({
  name: "sum",
  description: "",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number", default: 1 } }, required: ["a"] },
  execute: (_id, args) => textResult(JSON.stringify(args)),
});
const model = scriptedModel([{ content: [{ type: "toolCall", name: "sum", arguments: { a: "2" } }] }, "done"]);
const events = await lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [sum] }, { model }).pipe(toArray()));
console.log(JSON.stringify(events.filter((event) => event.type === "tool_execution_end").map((event) => event.result.content)));
`);
    expect(result).toStrictEqual({ status: 0, stderr: "", stdout: '[[{"type":"text","text":"{\\"a\\":2,\\"b\\":1}"}]]\n' });
  });

  it("answers every call with an error naming Ajv when it cannot be loaded; the run goes on", () => {
    const result = runScript(
      `
import { agentLoop, defineTool, textResult } from ${sourceUrl("index.ts")};
import { scriptedModel } from ${sourceUrl("testing/index.ts")};
import { lastValueFrom, toArray } from "rxjs";
const echo = defineTool({ name: "echo", description: "", parameters: { type: "object" }, execute: () => textResult("ran") });
const model = scriptedModel([{ content: [{ type: "toolCall", name: "echo", arguments: {} }] }, { content: [{ type: "toolCall", name: "echo", arguments: {} }] }, "done"]);
const events = await lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [echo] }, { model }).pipe(toArray()));
for (const event of events) if (event.type === "tool_execution_end") console.log(event.isError, event.result.content[0].text);
console.log(events.at(-1).type);
`,
      { hide: ["ajv"] },
    );
    const refused = "true Tool \"echo\" has a JSON Schema, and its validator (Ajv) could not be loaded: Cannot find package 'ajv'";
    expect(result).toStrictEqual({ status: 0, stderr: "", stdout: `${refused}\n${refused}\nagent_end\n` });
  });
});

describe("TypeBox and Standard Schema users never load Ajv", { timeout: FRESH_PROCESS_TIMEOUT_MS }, () => {
  it("import('rxagent') and a TypeBox-only run load no Ajv module in Node; a JSON Schema tool then does", () => {
    const result = runScript(`
import { createRequire } from "node:module";
import { Type } from "@sinclair/typebox";
import { lastValueFrom } from "rxjs";
const { agentLoop, defineTool, textResult, validateArguments } = await import(${sourceUrl("index.ts")});
const { scriptedModel } = await import(${sourceUrl("testing/index.ts")});
const ajvModules = () => Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes("/node_modules/ajv/")).length;
const add = defineTool({ name: "add", description: "", parameters: Type.Object({ a: Type.Number() }), execute: () => textResult("ok") });
const model = scriptedModel([{ content: [{ type: "toolCall", name: "add", arguments: { a: 1 } }] }, "done"]);
await lastValueFrom(agentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [add] }, { model }));
console.log("typebox only:", ajvModules());
const pending = validateArguments("plain", { type: "object" }, {});
await lastValueFrom(pending);
console.log("after a JSON Schema:", ajvModules() > 0);
`);
    expect(result).toStrictEqual({ status: 0, stderr: "", stdout: "typebox only: 0\nafter a JSON Schema: true\n" });
  });

  it("bundles a TypeBox-only agent for the browser with Ajv only in a chunk of its own, never in the entry", async () => {
    const result = await build({
      stdin: {
        contents: `
import { Type } from "@sinclair/typebox";
import { Agent, defineTool, textResult } from "./src/index.ts";
import { scriptedModel } from "./src/testing/index.ts";
const add = defineTool({ name: "add", description: "", parameters: Type.Object({ a: Type.Number() }), execute: () => textResult("ok") });
export const agent = new Agent({ model: scriptedModel(["hi"]), tools: [add] });`,
        resolveDir: repositoryRoot,
        loader: "ts",
      },
      absWorkingDir: repositoryRoot,
      bundle: true,
      splitting: true,
      platform: "browser",
      format: "esm",
      outdir: "out",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const outputs = Object.entries(result.metafile.outputs).map(([file, output]) => ({
      file,
      entry: output.entryPoint === "<stdin>",
      ajv: Object.keys(output.inputs).some((input) => input.includes("node_modules/ajv/")),
    }));
    expect(outputs.filter((output) => output.entry).map((output) => output.ajv)).toStrictEqual([false]);
    // The check can fail: Ajv is in the build, behind the dynamic import.
    expect(outputs.some((output) => output.ajv)).toBe(true);
  });
});
