import path from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { pages, root, snippetsOf } from "../docs/doc-snippets.js";

// What `tsc --noEmit` checks (the repository's tsconfig: src, test, examples), and every ```ts block
// of README.md and docs/ as a module of its own, in ONE program: the two checks share the type
// graph of src/, which is most of the work, and run inside the suite beside the other files instead
// of after it (`npm test` ran `tsc` after vitest: about 24 s on one core, the other idle).

const snippets = pages.flatMap(snippetsOf);

interface Problems {
  /** Diagnostics outside the snippets, formatted as tsc prints them. */
  project: string[];
  /** Per snippet file, its diagnostics with the line in the block. */
  snippets: Map<string, string[]>;
}

function typeCheck(): Problems {
  const configFile = ts.readConfigFile(path.join(root, "tsconfig.json"), ts.sys.readFile);
  const { options, fileNames, errors } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const sources = new Map(snippets.map((snippet) => [snippet.file, snippet.source]));
  const host = ts.createCompilerHost({ ...options, noEmit: true });
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => sources.has(file) || fileExists.call(host, file);
  host.readFile = (file) => sources.get(file) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, onError, createNew) => {
    const text = sources.get(file);
    return text === undefined ? getSourceFile.call(host, file, language, onError, createNew) : ts.createSourceFile(file, text, language, true);
  };
  const program = ts.createProgram({ rootNames: [...fileNames, ...sources.keys()], options: { ...options, noEmit: true }, host });
  const snippetProblems = new Map<string, string[]>(snippets.map((snippet) => [snippet.file, []]));
  const projectDiagnostics: ts.Diagnostic[] = [...errors];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file;
    const problems = file === undefined ? undefined : snippetProblems.get(file.fileName);
    if (file === undefined || problems === undefined) {
      projectDiagnostics.push(diagnostic);
      continue;
    }
    const line = diagnostic.start === undefined ? 0 : file.getLineAndCharacterOfPosition(diagnostic.start).line + 1;
    problems.push(`line ${line} of the block: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`);
  }
  const formatHost: ts.FormatDiagnosticsHost = { getCanonicalFileName: (file) => file, getCurrentDirectory: () => root, getNewLine: () => "\n" };
  return { project: projectDiagnostics.map((diagnostic) => ts.formatDiagnostic(diagnostic, formatHost).trim()), snippets: snippetProblems };
}

describe("type-checking", () => {
  let problems: Problems;
  beforeAll(() => {
    problems = typeCheck();
  }, 300_000);

  it("the project has no type errors (what `tsc --noEmit` checks)", () => {
    expect(problems.project).toStrictEqual([]);
  });

  it("finds blocks on every page that has them, and some that run offline", () => {
    expect(snippets.length).toBeGreaterThan(10);
    expect(snippets.filter((snippet) => snippet.runsOffline).length).toBeGreaterThan(3);
  });

  it.each(snippets.map((snippet) => [snippet.where, snippet] as const))("the block at %s type-checks", (_where, snippet) => {
    expect(problems.snippets.get(snippet.file)).toStrictEqual([]);
  });
});
