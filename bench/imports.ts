/**
 * Cold start per entry point: for each of rxagent's entry points, fresh Node processes that do
 * nothing but `await import(entry)` from the built package, reporting the import's time (median
 * and range over the processes) and what it loaded: modules in all, and which heavy packages
 * (Ajv, openai, ws, TypeBox's compiler, ...) among them.
 *
 * `node --import tsx bench/imports.ts [processes]` (default 7; `npm run build` first). Time and
 * modules come from separate processes: the hook that lists ESM modules slows loading, so timed
 * processes run without it. CommonJS modules (rxjs's Node build is CommonJS) are counted from
 * `require.cache`.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

export const entryPoints = [
  "rxagent",
  "rxagent/testing",
  "rxagent/openai",
  "rxagent/pi-ai",
  "rxagent/server",
  "rxagent/client",
  "rxagent/mcp",
  "rxagent/redis",
  "rxagent/otel",
  "rxagent/json-schema",
  "rxagent/demo",
] as const;

/** The packages whose loading the table reports; each is a path fragment of its modules. */
const heavyPackages = {
  ajv: "/node_modules/ajv/",
  openai: "/node_modules/openai/",
  ws: "/node_modules/ws/",
  "typebox compiler": "/@sinclair/typebox/build/esm/compiler/",
  typebox: "/@sinclair/typebox/",
  ioredis: "/node_modules/ioredis/",
  mcp: "/@modelcontextprotocol/",
  otel: "/@opentelemetry/",
  "pi-ai": "/@mariozechner/pi-ai/",
  rxjs: "/node_modules/rxjs/",
};

const timedScript = (entry: string): string =>
  `const start = performance.now(); await import(${JSON.stringify(entry)}); process.stdout.write(String(performance.now() - start));`;

const listingScript = (entry: string): string => `
import { register, createRequire } from "node:module";
const urls = new Set();
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => urls.add(url));
register("data:text/javascript," + encodeURIComponent(
  "let port; export function initialize(data) { port = data.port; }" +
  "export async function resolve(specifier, context, next) { const resolved = await next(specifier, context); port.postMessage(resolved.url); return resolved; }"),
  import.meta.url, { data: { port: port2 }, transferList: [port2] });
await import(${JSON.stringify(entry)});
await new Promise((resolve) => setTimeout(resolve, 100));
port1.close();
const require = createRequire(import.meta.url);
const all = new Set([...urls].filter((url) => url.startsWith("file:")).map((url) => decodeURIComponent(new URL(url).pathname)));
for (const path of Object.keys(require.cache)) all.add(path);
process.stdout.write(JSON.stringify([...all]));`;

interface EntryFigures {
  entry: string;
  milliseconds: number[];
  modules: string[];
}

function measure(entry: string, processes: number): EntryFigures {
  const milliseconds: number[] = [];
  for (let index = 0; index < processes; index++) {
    milliseconds.push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", timedScript(entry)], { cwd: root, encoding: "utf8" })));
  }
  const modules = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", listingScript(entry)], { cwd: root, encoding: "utf8" })) as string[];
  return { entry, milliseconds, modules };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function row({ entry, milliseconds, modules }: EntryFigures): string {
  const heavy = Object.entries(heavyPackages)
    .map(([name, fragment]) => [name, modules.filter((path) => path.includes(fragment)).length] as const)
    .filter(([, count]) => count > 0)
    .map(([name, count]) => `${name} ${count}`);
  const own = modules.filter((path) => path.startsWith(`${root}dist/`)).length;
  const range = `${Math.round(Math.min(...milliseconds))}–${Math.round(Math.max(...milliseconds))}`;
  return `| \`${entry}\` | ${Math.round(median(milliseconds))} [${range}] | ${modules.length} | ${own} | ${heavy.join(", ") || "none"} |`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const processes = Number(process.argv[2] ?? 7);
  console.log(`Cold import per entry point: ${processes} fresh processes each, Node ${process.version}`);
  console.log("| entry | import (ms), median [range] | modules | rxagent's own | heavy packages loaded (modules) |");
  console.log("|---|---|---|---|---|");
  for (const entry of entryPoints) console.log(row(measure(entry, processes)));
}
