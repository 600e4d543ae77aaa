import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { lastValueFrom, isObservable, from, type Observable } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoTools } from "../../src/demo/demo-tools.js";
import { Sandbox, SandboxError } from "../../src/demo/sandbox.js";
import type { AgentTool, AgentToolResult } from "../../src/types.js";

let base: string;
let root: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), "rxagent-sandbox-"));
  root = path.join(base, "root");
  await mkdir(path.join(root, "docs"), { recursive: true });
  await writeFile(path.join(root, "notes.txt"), "first line\nsecond line\n");
  await writeFile(path.join(root, "docs", "guide.md"), "# Guide\n");
  await writeFile(path.join(base, "secret.txt"), "top secret");
  await symlink(path.join(base, "secret.txt"), path.join(root, "link-out.txt"));
  await symlink(base, path.join(root, "dir-out"));
  await symlink(path.join(root, "notes.txt"), path.join(root, "link-in.txt"));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("Sandbox", () => {
  it("resolves paths inside the root", async () => {
    const sandbox = new Sandbox(root);
    await expect(sandbox.resolve("notes.txt")).resolves.toMatch(/notes\.txt$/);
    await expect(sandbox.resolve("docs/../notes.txt")).resolves.toMatch(/notes\.txt$/);
    await expect(sandbox.resolve(path.join(root, "docs"))).resolves.toMatch(/docs$/);
    await expect(sandbox.resolve("link-in.txt")).resolves.toMatch(/notes\.txt$/);
  });

  it.each(["../secret.txt", "docs/../../secret.txt", "/etc/passwd", "..", "link-out.txt", "dir-out/secret.txt", "dir-out"])(
    "refuses %s",
    async (requested) => {
      await expect(new Sandbox(root).resolve(requested)).rejects.toThrow(/outside the sandbox/);
    },
  );

  it("says when a path does not exist", async () => {
    await expect(new Sandbox(root).resolve("missing.txt")).rejects.toThrow(SandboxError);
    await expect(new Sandbox(root).resolve("missing.txt")).rejects.toThrow(/does not exist/);
  });
});

describe("file tools", () => {
  const run = async (tool: AgentTool, args: unknown): Promise<AgentToolResult> => {
    const output = tool.execute("call_1", args as never, { signal: new AbortController().signal, update: () => undefined });
    return lastValueFrom(isObservable(output) ? (output as Observable<AgentToolResult>) : from(Promise.resolve(output)));
  };
  const tool = (name: string) => demoTools({ root, stepDelay: 0 }).find((candidate) => candidate.name === name) as AgentTool;

  it("list_files lists a folder with useful details", async () => {
    const result = await run(tool("list_files"), {});
    expect(result.details).toMatchObject({ path: ".", omitted: 0 });
    expect((result.details as { entries: { name: string; kind: string }[] }).entries.map((entry) => `${entry.kind}:${entry.name}`)).toStrictEqual([
      "directory:docs",
      "symlink:dir-out",
      "symlink:link-in.txt",
      "symlink:link-out.txt",
      "file:notes.txt",
    ]);
  });

  it("read_file reads text and reports size and lines", async () => {
    const result = await run(tool("read_file"), { path: "notes.txt" });
    expect(result).toStrictEqual({
      content: [{ type: "text", text: "first line\nsecond line\n" }],
      details: { path: "notes.txt", bytes: 23, lines: 2, truncated: false },
    });
  });

  it("read_file cuts long files", async () => {
    const result = await run(tool("read_file"), { path: "notes.txt", maxBytes: 5 });
    expect(result.details).toMatchObject({ truncated: true });
    expect(result.content).toStrictEqual([{ type: "text", text: "first\n… (cut at 5 of 23 bytes)" }]);
  });

  it.each([["../secret.txt"], ["link-out.txt"], ["dir-out/secret.txt"]])("read_file refuses %s", async (requested) => {
    await expect(run(tool("read_file"), { path: requested })).rejects.toThrow(/outside the sandbox/);
  });

  it("list_files refuses to leave the root", async () => {
    await expect(run(tool("list_files"), { path: ".." })).rejects.toThrow(/outside the sandbox/);
  });
});
