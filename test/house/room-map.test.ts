import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The room map of ../shared/STYLE.md as a check: every relative import in src/ goes from a room to
// one the map lets it import, and no module imports itself through a circle.

const core = ["util", "types", "errors", "tools", "model", "protocol", "operators", "operators/tool-calls", "streams/transcript", "streams", "agents", "agent", "index"];
const leaves = ["util", "types", "errors"];
/** What each room may import besides itself. */
const allowed: Record<string, string[]> = {
  util: [],
  // The one arrow back up: a tool's schema types are part of the protocol's types.
  types: ["util", "tools"],
  errors: ["util", "types"],
  tools: leaves,
  model: leaves,
  // The wire derives streamed tool arguments from their text as the model's parser does (protocol 3's `j`).
  protocol: [...leaves, "model"],
  operators: leaves,
  "operators/tool-calls": [...leaves, "operators", "tools", "model"],
  "streams/transcript": [...leaves, "model"],
  streams: [...leaves, "streams/transcript", "operators", "operators/tool-calls", "tools", "model"],
  // Agents made of agents: a tool whose call runs a loop of its own.
  agents: [...leaves, "streams", "tools"],
  agent: [...leaves, "streams", "streams/transcript", "operators", "operators/tool-calls", "tools", "model"],
  index: core,
  // Integrations stand on the core and never on each other, with three exceptions named here: the
  // Redis sessions run on the server's session hub, the pi-agent-core drop-in on pi-ai's adapter,
  // and the CLI is the application over them all.
  openai: core,
  "pi-ai": core,
  mcp: core,
  demo: core,
  testing: core,
  client: core,
  server: core,
  otel: core,
  redis: [...core, "server"],
  // The drop-in for pi-agent-core runs its streamFn through the pi-ai integration's fromPiAi.
  "pi-agent-core": [...core, "pi-ai"],
  "json-schema": core,
  typebox: core,
  "ai-sdk": core,
  cli: [...core, "openai", "pi-ai", "mcp", "demo", "testing", "client", "server", "redis", "otel", "ai-sdk"],
};

const root = path.resolve(import.meta.dirname, "../../src");
const sourceFiles = (folder: string): string[] =>
  readdirSync(folder).flatMap((name) => {
    const full = path.join(folder, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith(".ts") ? [full] : [];
  });

/** The room of a source file: its folder under src/ (two levels for the nested rooms), or the file's name at the top. */
function roomOf(file: string): string {
  const relative = path.relative(root, file).split(path.sep);
  if (relative.length === 1) return relative[0]!.replace(/\.ts$/, "");
  const nested = `${relative[0]}/${relative[1]}`;
  return nested in allowed ? nested : relative[0]!;
}

const imports = new Map<string, string[]>();
for (const file of sourceFiles(root)) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  imports.set(
    file,
    importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith("."))
      .map((name) => path.resolve(path.dirname(file), name).replace(/\.js$/, ".ts")),
  );
}

describe("the room map", () => {
  it("knows every room in src/", () => {
    const unknown = [...new Set([...imports.keys()].map(roomOf))].filter((room) => !(room in allowed));
    expect(unknown).toEqual([]);
  });

  it("has every import point to a room the map allows", () => {
    const wrong: string[] = [];
    for (const [file, targets] of imports) {
      const from = roomOf(file);
      for (const target of targets) {
        const to = roomOf(target);
        if (to !== from && !allowed[from]!.includes(to)) wrong.push(`${path.relative(root, file)} -> ${path.relative(root, target)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("has no import circle", () => {
    // Tarjan's strongly connected components, iterative so deep chains cannot overflow.
    const circles: string[][] = [];
    const order = new Map<string, number>();
    const lowest = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    let counter = 0;
    for (const start of imports.keys()) {
      if (order.has(start)) continue;
      const work: { file: string; next: number }[] = [{ file: start, next: 0 }];
      order.set(start, counter);
      lowest.set(start, counter++);
      stack.push(start);
      onStack.add(start);
      while (work.length > 0) {
        const frame = work[work.length - 1]!;
        const targets = (imports.get(frame.file) ?? []).filter((target) => imports.has(target));
        if (frame.next < targets.length) {
          const target = targets[frame.next++]!;
          if (!order.has(target)) {
            order.set(target, counter);
            lowest.set(target, counter++);
            stack.push(target);
            onStack.add(target);
            work.push({ file: target, next: 0 });
          } else if (onStack.has(target)) {
            lowest.set(frame.file, Math.min(lowest.get(frame.file)!, order.get(target)!));
          }
          continue;
        }
        work.pop();
        const parent = work[work.length - 1];
        if (parent) lowest.set(parent.file, Math.min(lowest.get(parent.file)!, lowest.get(frame.file)!));
        if (lowest.get(frame.file) === order.get(frame.file)) {
          const component: string[] = [];
          let member: string;
          do {
            member = stack.pop()!;
            onStack.delete(member);
            component.push(path.relative(root, member));
          } while (member !== frame.file);
          if (component.length > 1) circles.push(component);
        }
      }
    }
    expect(circles).toEqual([]);
  });
});
