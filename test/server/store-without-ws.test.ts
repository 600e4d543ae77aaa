import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { repositoryRoot } from "../cli/cli-process.js";

/**
 * Runs `script` in a Node process where the package `ws` cannot be found, as in a project that
 * did not install the optional peer: a resolve hook refuses it the way Node does.
 */
function runWithoutWs(script: string): { status: number | null; stdout: string; stderr: string } {
  const folder = mkdtempSync(path.join(tmpdir(), "rxagent-no-ws-"));
  const hooks = path.join(folder, "hide-ws.mjs");
  writeFileSync(
    hooks,
    `export async function resolve(specifier, context, next) {
  if (specifier === "ws" || specifier.startsWith("ws/")) {
    throw Object.assign(new Error("Cannot find package 'ws'"), { code: "ERR_MODULE_NOT_FOUND" });
  }
  return next(specifier, context);
}\n`,
  );
  const register = path.join(folder, "register.mjs");
  writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const scriptFile = path.join(folder, "script.mts");
  writeFileSync(scriptFile, script.replaceAll("$STORE", JSON.stringify(path.join(folder, "session.jsonl"))));
  const result = spawnSync(process.execPath, ["--import", register, "--import", "tsx", scriptFile], { cwd: repositoryRoot, encoding: "utf8", timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const serverEntry = JSON.stringify(pathToFileURL(path.join(repositoryRoot, "src/server/index.ts")).href);

describe("rxagent/server without the optional ws", () => {
  it("JsonlTranscriptStore imports and writes; serveAgents fails naming the package to install", () => {
    const result = runWithoutWs(`
import { JsonlTranscriptStore, serveAgents } from ${serverEntry};
const store = new JsonlTranscriptStore($STORE);
store.append({ role: "user", content: "hello", timestamp: 1 });
console.log(JSON.stringify(await store.load()));
await serveAgents({ port: 0, createAgent: () => { throw new Error("unused"); } }).then(
  () => console.log("served"),
  (error) => console.log(error.message),
);
`);
    expect([result.status, result.stderr]).toStrictEqual([0, ""]);
    expect(result.stdout.split("\n")).toStrictEqual([
      '[{"role":"user","content":"hello","timestamp":1}]',
      expect.stringMatching(/^serveAgents needs the optional package ws: npm install ws \(Cannot find package 'ws'\)$/),
      "",
    ]);
  });
});
