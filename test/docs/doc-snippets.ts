import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// The ```ts blocks of the README and docs/, for the tests that type-check and run them.

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const pages = ["README.md", ...readdirSync(path.join(root, "docs")).filter((file) => file.endsWith(".md")).map((file) => `docs/${file}`)];

export interface Snippet {
  /** `README.md:42`: the page and the line of the opening fence. */
  where: string;
  /** A module file name for it (virtual for the type check, written for a run). */
  file: string;
  source: string;
  runsOffline: boolean;
  /** The comment right above the block, or an empty string. */
  marker: string;
}

/** The ```ts blocks of a page, with the marker comment right above each (blank lines between allowed). */
export function snippetsOf(page: string): Snippet[] {
  const lines = readFileSync(path.join(root, page), "utf8").split("\n");
  const snippets: Snippet[] = [];
  let previous: string | undefined;
  for (let index = 0; index < lines.length; index++) {
    if (lines[index] !== "```ts") continue;
    const end = lines.indexOf("```", index + 1);
    if (end < 0) throw new Error(`${page}:${index + 1}: a \`\`\`ts block that never closes`);
    let markerLine = index - 1;
    while (markerLine >= 0 && lines[markerLine]!.trim() === "") markerLine--;
    const marker = lines[markerLine]?.startsWith("<!--") ? lines[markerLine]! : "";
    const body = lines.slice(index + 1, end).join("\n");
    const continues = marker.includes("continues the block above");
    if (continues && previous === undefined) throw new Error(`${page}:${index + 1}: continues a block, but none is above`);
    const source = continues ? `${previous}\n${body}` : body;
    const name = `${page.replace(/[/.]/g, "-")}-${index + 1}`;
    // `export {}`: a module even without imports, so top-level await works.
    snippets.push({ where: `${page}:${index + 1}`, file: path.join(root, ".snippets", `${name}.ts`), source: `${source}\nexport {};\n`, runsOffline: marker === "<!-- runs offline -->", marker });
    previous = source;
    index = end;
  }
  return snippets;
}

/** Runs a snippet file with tsx (which maps `rxagent*` to src/ through tsconfig paths), without the caller's OPENAI_ variables. */
export function runWithTsx(file: string, extra: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const environment: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    for (const name of Object.keys(environment)) if (name.startsWith("OPENAI_")) delete environment[name];
    Object.assign(environment, extra);
    const child = spawn(process.execPath, ["--import", "tsx", file], { cwd: root, env: environment, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

