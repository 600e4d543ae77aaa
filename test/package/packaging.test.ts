import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumerEnvironment, folderSize, installedPackages, npm, repositoryRoot, run, succeed } from "./consumer.js";

// The package as users meet it: packed (which builds it), installed from the tarball into fresh
// ESM projects, imported, type-checked, bundled for a browser, its bin run, and linted.
// One pack and two installs (from npm's cache) serve every test here.

interface PackageJson {
  version: string;
  exports: Record<string, { types: string; import: string }>;
  bin: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string }[];
}

const manifest = JSON.parse(readFileSync(path.join(repositoryRoot, "package.json"), "utf8")) as PackageJson;
/** `rxagent`, `rxagent/testing`, … : every entry point package.json lists. */
const entryPoints = Object.keys(manifest.exports).map((key) => (key === "." ? "rxagent" : `rxagent/${key.slice(2)}`));
/** Entry points that must load without any optional peer, and bundle for a browser. */
const browserEntryPoints = ["rxagent", "rxagent/client"];
/**
 * Entry points whose optional peer brings declarations that do not compile without `skipLibCheck`
 * (pi-ai brings @anthropic-ai/sdk, whose `.d.mts` files import undici-types by relative paths that a
 * consumer's layout does not have): type-checked apart, with `skipLibCheck`, so the rest stays strict.
 */
const entriesNeedingSkipLibCheck = ["rxagent/pi-ai", "rxagent/pi-agent-core", "rxagent/ai-sdk"];
/** An example that imports such an entry point, or `ai` itself (its `@ai-sdk/provider` wants `@types/json-schema`), is checked with them. */
const needsSkipLibCheck = (source: string): boolean => [...entriesNeedingSkipLibCheck, "ai"].some((entry) => source.includes(`from "${entry}"`));
/** Entry points that must load with no optional peer installed. */
// `rxagent/server` loads `ws` only when serveAgents starts, so its store imports without it;
// `rxagent/ai-sdk` imports only types from `ai` (the front end needs `ai`, the server does not).
const peerlessEntryPoints = ["rxagent", "rxagent/testing", "rxagent/client", "rxagent/demo", "rxagent/server", "rxagent/json-schema", "rxagent/typebox", "rxagent/ai-sdk"];
/** Entry points known to need an optional peer, and which one (others may need any optional peer). */
const optionalPeerOf: Record<string, string> = { "rxagent/openai": "openai", "rxagent/otel": "@opentelemetry/api" };
/** Entry points imported for what they do, with no exports: `rxagent/json-schema` loads Ajv, `rxagent/typebox` TypeBox's compiler. */
const effectEntryPoints = ["rxagent/json-schema", "rxagent/typebox"];
/** Every optional peer, installed in the full project at the version this repository pins. */
const optionalPeers = Object.entries(manifest.peerDependenciesMeta ?? {}).flatMap(([name, meta]) => (meta.optional ? [name] : []));
const pinned = (name: string) => `${name}@${manifest.devDependencies[name]}`;

let work: string;
let tarball: string;
let packed: PackResult;
/** Installed with every optional peer and the types a TypeScript user adds. */
let full: string;
/** `npm i rxagent` and nothing else. */
let lean: string;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "rxagent-package-"));
  const started = performance.now();
  const packOutput = await npm(["pack", "--json", "--pack-destination", work], repositoryRoot);
  packed = (JSON.parse(packOutput.stdout.slice(packOutput.stdout.indexOf("["))) as PackResult[])[0]!;
  tarball = path.join(work, packed.filename);
  full = project("full");
  lean = project("lean");
  const install = ["install", "--prefer-offline", "--no-audit", "--no-fund"];
  await Promise.all([
    npm([...install, tarball, ...["rxjs", ...optionalPeers, "@types/ws", "@types/node"].map(pinned)], full),
    npm([...install, tarball], lean),
  ]);
  console.log(`packed and installed twice in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
}, 120_000);

function project(name: string): string {
  const folder = path.join(work, name);
  mkdirSync(folder);
  writeFileSync(path.join(folder, "package.json"), JSON.stringify({ name: `consumer-${name}`, private: true, type: "module" }));
  return folder;
}

/** Runs an ES module in a project, with this Node. */
function node(folder: string, source: string, environment?: NodeJS.ProcessEnv) {
  const file = path.join(folder, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, source);
  return run(process.execPath, [file], { cwd: folder, ...(environment ? { environment } : {}) });
}

describe("the packed tarball", () => {
  it("holds the build with declarations, the browser page and the README; no sources, tests or maps", () => {
    const files = packed.files.map((file) => file.path);
    const targets = Object.values(manifest.exports).flatMap((target) => [target.types, target.import]);
    for (const file of [...targets, ...Object.values(manifest.bin)]) expect(files).toContain(path.normalize(file));
    const besideDist = files.filter((file) => !file.startsWith("dist/"));
    expect(besideDist.filter((file) => !file.startsWith("examples/web/"))).toStrictEqual(["README.md", "bin/rxagent.js", "cjs/esm-only.cjs", "package.json"]);
    expect(besideDist).toContain("examples/web/index.html");
    expect(files.filter((file) => file.endsWith(".map") || file.endsWith(".ts") !== file.endsWith(".d.ts"))).toStrictEqual([]);
    console.log(`tarball: ${packed.entryCount} files, ${(packed.size / 1024).toFixed(1)} kB packed, ${(packed.unpackedSize / 1024).toFixed(1)} kB unpacked`);
  });

  it("is publishable and installs quietly: not private, no script that runs when a user installs it", () => {
    const installed = JSON.parse(readFileSync(path.join(lean, "node_modules", "rxagent", "package.json"), "utf8")) as { private?: boolean; scripts?: Record<string, string> };
    expect(installed.private).toBeUndefined();
    const installTime = ["preinstall", "install", "postinstall", "prepare"];
    expect(Object.keys(installed.scripts ?? {}).filter((name) => installTime.includes(name))).toStrictEqual([]);
  });

  it("installs lean: the core's dependencies and the rxjs peer, nothing else", () => {
    const packages = installedPackages(path.join(lean, "node_modules"));
    // Ajv (JSON Schema tools, e.g. MCP's) brings four small packages of its own.
    expect(packages).toStrictEqual(["@sinclair/typebox", "ajv", "fast-deep-equal", "fast-uri", "json-schema-traverse", "require-from-string", "rxagent", "rxjs", "tslib"]);
    // One rxjs: the app's, also for rxagent (a second copy breaks `pipe` types and instanceof).
    expect(installedPackages(path.join(full, "node_modules", "rxagent", "node_modules"))).toStrictEqual([]);
    const size = folderSize(path.join(lean, "node_modules"));
    console.log(`npm i rxagent: ${packages.length} packages, ${(size / 1024 / 1024).toFixed(1)} MB`);
  });
});

describe("in Node", () => {
  it("imports every entry point listed in package.json exports", async () => {
    const script = `const counts = {};
for (const entry of ${JSON.stringify(entryPoints)}) counts[entry] = Object.keys(await import(entry)).length;
console.log(JSON.stringify(counts));`;
    const { code, stdout, stderr } = await node(full, script);
    expect({ code, stderr }).toStrictEqual({ code: 0, stderr: "" });
    const counts = JSON.parse(stdout) as Record<string, number>;
    expect(Object.keys(counts)).toStrictEqual(entryPoints);
    expect(Object.entries(counts).filter(([entry, count]) => count === 0 && !effectEntryPoints.includes(entry))).toStrictEqual([]);
  });

  it("without the optional peers, imports the rest and names the package an entry point needs", async () => {
    const script = `const outcomes = {};
for (const entry of ${JSON.stringify(entryPoints)}) {
  outcomes[entry] = await import(entry).then(() => "ok", (error) => error.message.split("\\n")[0]);
}
console.log(JSON.stringify(outcomes));`;
    const { stdout } = await node(lean, script);
    const missingPeer = (peers: string[]) => expect.stringMatching(new RegExp(`^Cannot find package '(${peers.map((peer) => peer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})' imported from .*rxagent`));
    const expected = Object.fromEntries(
      entryPoints.map((entry) => {
        const peer = optionalPeerOf[entry];
        if (peerlessEntryPoints.includes(entry)) return [entry, "ok"];
        return [entry, peer ? missingPeer([peer]) : expect.toSatisfy((outcome: string) => outcome === "ok" || missingPeer(optionalPeers).asymmetricMatch(outcome))];
      }),
    );
    expect(JSON.parse(stdout)).toStrictEqual(expected);
  });

  it("in a CommonJS project, require() says the package is ESM only and how to load it; import() loads it", async () => {
    // What `npm init -y` makes: no "type", so .js files are CommonJS.
    const folder = path.join(lean, "commonjs-consumer");
    mkdirSync(folder);
    writeFileSync(path.join(folder, "package.json"), JSON.stringify({ name: "commonjs-consumer", version: "1.0.0" }));
    writeFileSync(
      path.join(folder, "index.js"),
      `const outcomes = {};
for (const entry of ${JSON.stringify(entryPoints)}) {
  try { require(entry); outcomes[entry] = "loaded"; } catch (error) { outcomes[entry] = error.message; }
}
import("rxagent").then((rxagent) => console.log(JSON.stringify({ outcomes, imported: typeof rxagent.Agent })));`,
    );
    const { code, stdout, stderr } = await run(process.execPath, ["index.js"], { cwd: folder });
    expect({ code, stderr }).toStrictEqual({ code: 0, stderr: "" });
    const esmOnly = 'rxagent is ESM only ("type": "module"): require() cannot load it. Use `import { Agent } from "rxagent"` in an ES module (a .mjs file, or "type": "module" in your package.json), or from CommonJS: `const { Agent } = await import("rxagent")`.';
    expect(JSON.parse(stdout)).toStrictEqual({ outcomes: Object.fromEntries(entryPoints.map((entry) => [entry, esmOnly])), imported: "function" });
  });

  it("serves the browser page from the installed package", async () => {
    const script = `import { Agent } from "rxagent";
import { demoModel } from "rxagent/demo";
import { serveWebUi } from "rxagent/server";
const ui = await serveWebUi({ createAgent: () => new Agent({ model: demoModel() }) });
const pages = [];
for (const file of ["", "app.js", "client.js", "style.css"]) {
  const response = await fetch(new URL(file, ui.url));
  pages.push(response.status + " " + (await response.text()).length);
}
await ui.close();
console.log(JSON.stringify(pages));`;
    const { code, stdout, stderr } = await node(full, script);
    expect({ code, stderr }).toStrictEqual({ code: 0, stderr: "" });
    const sizes = ["index.html", "app.js", "client.js", "style.css"].map((file) => `200 ${readFileSync(path.join(repositoryRoot, "examples/web", file), "utf8").length}`);
    expect(JSON.parse(stdout)).toStrictEqual(sizes);
  });
});

describe("the installed bin", () => {
  it("`npx rxagent chat` answers a piped prompt with the offline demo (no optional peer installed)", async () => {
    const { code, stdout, stderr } = await run("npx", ["--no-install", "rxagent", "chat"], {
      cwd: lean,
      input: "what is 12*7?\n",
      environment: consumerEnvironment({ RXAGENT_DEMO_DELAY: "0" }),
    });
    expect({ code, stderr }).toStrictEqual({ code: 0, stderr: "" });
    expect(stdout).toMatch(/offline demo model[\s\S]*12\*7 = 84/);
  });

  it("says which package to install when a command needs a missing optional peer", async () => {
    const withKey = await run("npx", ["--no-install", "rxagent", "chat"], { cwd: lean, environment: consumerEnvironment({ OPENAI_API_KEY: "sk-test" }) });
    expect([withKey.code, withKey.stderr]).toStrictEqual([1, expect.stringMatching(/^rxagent: The OpenAI provider .* needs the package "openai", which is not installed: npm i openai\n$/)]);
    const serve = await run("npx", ["--no-install", "rxagent", "serve", "--port", "0"], { cwd: lean });
    expect([serve.code, serve.stderr]).toStrictEqual([1, expect.stringMatching(/^rxagent: serveAgents needs the optional package ws: npm install ws \(Cannot find package 'ws' .*\)\n$/)]);
  });
});

describe("for TypeScript", () => {
  // A consumer that meets the peer problem the issue saw: rxjs operators and Subjects from the
  // app's own rxjs, handed to rxagent.
  const consumerSource = (entries: string[]) => `${entries.map((entry, index) => `import * as entry${index} from "${entry}";`).join("\n")}
import { map, Subject, type Observable } from "rxjs";
import { agentLoop, Agent, InvalidConfigError, type AgentEvent, type AgentMessage } from "rxagent";
import { configureMarbles, scriptedModel } from "rxagent/testing";
import { connectAgent } from "rxagent/client";

export const entryPoints = [${entries.map((_, index) => `entry${index}`).join(", ")}];
const steering = new Subject<AgentMessage>();
const model = scriptedModel(["Hi"]);
export const types: Observable<AgentEvent["type"]> = agentLoop([{ role: "user", content: "Hi", timestamp: 0 }], { messages: [] }, { model, steering }).pipe(map((event) => event.type));
export const added: Promise<AgentMessage[]> = new Agent({ model }).run("Hi");
export const marbles = configureMarbles(() => undefined);
export const isConfigError = (error: unknown): error is InvalidConfigError => error instanceof InvalidConfigError;
export const client = () => connectAgent("ws://127.0.0.1:1");
`;

  it.each(["NodeNext", "Bundler"])("type-checks a strict consumer of every entry point and the examples under moduleResolution %s", async (resolution) => {
    const folder = path.join(full, `typecheck-${resolution}`);
    mkdirSync(path.join(folder, "examples"), { recursive: true });
    writeFileSync(path.join(folder, "consumer.ts"), consumerSource(entryPoints.filter((entry) => !entriesNeedingSkipLibCheck.includes(entry))));
    writeFileSync(
      path.join(folder, "peer-consumer.ts"),
      entriesNeedingSkipLibCheck.map((entry, index) => `import * as entry${index} from "${entry}";\nexport const used${index} = entry${index};`).join("\n"),
    );
    const strictExamples: string[] = [];
    const peerExamples: string[] = [];
    for (const example of readdirSync(path.join(repositoryRoot, "examples")).filter((file) => file.endsWith(".ts"))) {
      copyFileSync(path.join(repositoryRoot, "examples", example), path.join(folder, "examples", example));
      (needsSkipLibCheck(readFileSync(path.join(repositoryRoot, "examples", example), "utf8")) ? peerExamples : strictExamples).push(`examples/${example}`);
    }
    const compilerOptions = {
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      target: "ES2022",
      lib: ["ES2023", "DOM"],
      types: ["node"],
      module: resolution === "Bundler" ? "ESNext" : "NodeNext",
      moduleResolution: resolution,
      verbatimModuleSyntax: true,
      noUncheckedIndexedAccess: true,
    };
    writeFileSync(path.join(folder, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["consumer.ts", ...strictExamples] }));
    writeFileSync(path.join(folder, "tsconfig.peer.json"), JSON.stringify({ compilerOptions: { ...compilerOptions, skipLibCheck: true }, include: ["peer-consumer.ts", ...peerExamples] }));
    const tsc = path.join(repositoryRoot, "node_modules", "typescript", "bin", "tsc");
    const { code, stdout } = await run(process.execPath, [tsc, "-p", folder], { cwd: folder });
    expect({ code, stdout }).toStrictEqual({ code: 0, stdout: "" });
    const peer = await run(process.execPath, [tsc, "-p", path.join(folder, "tsconfig.peer.json")], { cwd: folder });
    expect({ code: peer.code, stdout: peer.stdout }).toStrictEqual({ code: 0, stdout: "" });
  }, 180_000);
});

describe("in a browser bundle", () => {
  /** Fails the build on any Node built-in, named or `node:`-prefixed. */
  const noNodeBuiltins: Plugin = {
    name: "no-node-builtins",
    setup(builder) {
      const names = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
      builder.onResolve({ filter: /.*/ }, (args) =>
        names.has(args.path) || args.path.startsWith("node:") ? { errors: [{ text: `Node built-in "${args.path}" imported by ${args.importer}` }] } : undefined,
      );
    },
  };
  const bundle = (entry: string) =>
    build({
      stdin: { contents: `export * from "${entry}";`, resolveDir: full, loader: "js" },
      absWorkingDir: full,
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent",
      plugins: [noNodeBuiltins],
    });

  it.each(browserEntryPoints)("bundles %s with esbuild for the browser, with no Node built-in", async (entry) => {
    const result = await bundle(entry);
    expect(result.errors).toStrictEqual([]);
    expect(result.outputFiles[0]!.text.length).toBeGreaterThan(1000);
  });

  it("the check fails for rxagent/server, which is Node only", async () => {
    await expect(bundle("rxagent/server")).rejects.toThrow(/Node built-in "node:/);
  });
});

describe("the ecosystem's linters", () => {
  it("publint (strict) finds nothing in the tarball", async () => {
    const publint = path.join(repositoryRoot, "node_modules", "publint", "src", "cli.js");
    const { stdout } = await succeed(process.execPath, [publint, "run", tarball, "--strict"], { cwd: work });
    expect(stdout).toMatch(/All good!/);
  });

  it("@arethetypeswrong/cli finds no problem for an ESM-only package", async () => {
    const attw = path.join(repositoryRoot, "node_modules", "@arethetypeswrong", "cli", "dist", "index.js");
    // It exits 1 on the problems below that it reports but this package means (checked from the
    // JSON), and exiting cuts its output to a pipe short: written to a file instead.
    const reportFile = path.join(work, "attw.json");
    await run("sh", ["-c", `"$0" "$1" "$2" --profile esm-only --format json > "$3"`, process.execPath, attw, tarball, reportFile], { cwd: work });
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as { problems: Record<string, { kind: string; entrypoint?: string; resolutionKind?: string }[]> };
    // The esm-only profile ignores require() and node10 resolution: this package is ESM only.
    const ignored = new Set(["node10", "node16-cjs"]);
    // FalseESM, deliberately: `require` resolves to cjs/esm-only.cjs, which throws the ESM-only
    // message, while the types say ESM, so TypeScript tells a CommonJS consumer the same (TS1479).
    const problems = Object.values(report.problems)
      .flat()
      .filter((problem) => !ignored.has(problem.resolutionKind ?? "") && problem.kind !== "FalseESM");
    expect(problems).toStrictEqual([]);
    expect(Object.values(report.problems).flat().length).toBeGreaterThan(0); // the CJS ones it ignores: the report is real
  });
});

describe("the examples", () => {
  const examples = readdirSync(path.join(repositoryRoot, "examples")).filter((file) => file.endsWith(".ts"));
  it.each(examples)("examples/%s runs against the installed package", async (example) => {
    const folder = path.join(full, "run-examples");
    mkdirSync(folder, { recursive: true });
    copyFileSync(path.join(repositoryRoot, "examples", example), path.join(folder, example));
    const tsx = pathToFileURL(path.join(repositoryRoot, "node_modules", "tsx", "dist", "loader.mjs")).href;
    const { code, stdout, stderr } = await run(process.execPath, ["--import", tsx, example], { cwd: folder });
    expect({ code, stderr }).toStrictEqual({ code: 0, stderr: "" });
    expect(stdout).not.toBe("");
  });
});
