import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pages, root, runWithTsx, snippetsOf } from "./doc-snippets.js";

// Every ```ts block of README.md and docs/ marked `<!-- runs offline -->` runs (tsx, which maps
// `rxagent*` to src/ through tsconfig paths) and exits 0 with nothing on stderr. Every block
// type-checks too: test/house/type-check.test.ts, in one program with the project.
// `<!-- continues the block above -->` prepends the block above (the page says so too).

const snippets = pages.flatMap(snippetsOf);

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
