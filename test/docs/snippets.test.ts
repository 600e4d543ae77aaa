import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pages, root, runWithTsx, snippetsOf } from "./doc-snippets.js";

// Every ```ts block of README.md and docs/*.md type-checks against src/ (the repository's
// tsconfig maps `rxagent` and `rxagent/*` there), each block a module of its own, and every block
// marked `<!-- runs offline -->` runs (tsx, same mapping) and exits 0 with nothing on stderr.
// `<!-- continues the block above -->` prepends the block above (the page says so too).

const snippets = pages.flatMap(snippetsOf);

/** Type-checks every snippet in one program with the repository's compiler options; the snippets live in memory. */
function typeCheck(): Map<string, string[]> {
  const configFile = ts.readConfigFile(path.join(root, "tsconfig.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const sources = new Map(snippets.map((snippet) => [snippet.file, snippet.source]));
  const host = ts.createCompilerHost({ ...options, noEmit: true });
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => sources.has(file) || fileExists.call(host, file);
  host.readFile = (file) => sources.get(file) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, onError, createNew) => {
    const text = sources.get(file);
    return text === undefined ? getSourceFile.call(host, file, language, onError, createNew) : ts.createSourceFile(file, text, language, true);
  };
  const program = ts.createProgram({ rootNames: [...sources.keys()], options: { ...options, noEmit: true }, host });
  const problems = new Map<string, string[]>();
  for (const snippet of snippets) {
    const sourceFile = program.getSourceFile(snippet.file);
    if (!sourceFile) throw new Error(`${snippet.where}: not in the program`);
    const diagnostics = [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)];
    problems.set(
      snippet.file,
      diagnostics.map((diagnostic) => {
        const line = diagnostic.start === undefined ? 0 : sourceFile.getLineAndCharacterOfPosition(diagnostic.start).line + 1;
        return `line ${line} of the block: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
      }),
    );
  }
  return problems;
}

describe("the code blocks of README.md and docs/", () => {
  let problems: Map<string, string[]>;
  beforeAll(() => {
    problems = typeCheck();
  }, 180_000);

  it("finds blocks on every page that has them, and some that run offline", () => {
    expect(snippets.length).toBeGreaterThan(10);
    expect(snippets.filter((snippet) => snippet.runsOffline).length).toBeGreaterThan(3);
  });

  it.each(snippets.map((snippet) => [snippet.where, snippet] as const))("%s type-checks", (_where, snippet) => {
    expect(problems.get(snippet.file)).toStrictEqual([]);
  });
});

describe("the blocks marked <!-- runs offline -->", () => {
  const offline = snippets.filter((snippet) => snippet.runsOffline);
  beforeAll(() => {
    mkdirSync(path.join(root, ".snippets"), { recursive: true });
    for (const snippet of offline) writeFileSync(snippet.file, snippet.source);
  });
  // Only these files: test/docs/first-agent.test.ts may be using the folder meanwhile.
  afterAll(() => {
    for (const snippet of offline) rmSync(snippet.file, { force: true });
  });

  // Concurrent: each is a process of its own, mostly tsx starting up.
  it.concurrent.each(offline.map((snippet) => [snippet.where, snippet] as const))("%s runs and exits 0", async (_where, snippet) => {
    const { code, stderr } = await runWithTsx(snippet.file);
    expect({ code, stderr }).toStrictEqual({ code: 0, stderr: "" });
  }, 60_000);
});
