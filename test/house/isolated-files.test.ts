import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedFiles, processWideChanges } from "../helpers/isolated-files.js";
import { root } from "../docs/doc-snippets.js";

function testFiles(folder: string): string[] {
  return readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return relative === "test/package" ? [] : testFiles(relative);
    return entry.name.endsWith(".test.ts") ? [relative] : [];
  });
}

describe("test files that change process-wide things run isolated", () => {
  it("lists every file that mocks a module, fakes timers, spies, sets a global or the environment, and no other", () => {
    const changing = testFiles("test").filter((file) => processWideChanges.test(readFileSync(path.join(root, file), "utf8")));
    expect(changing.length).toBeGreaterThan(5);
    expect([...isolatedFiles].sort()).toStrictEqual(changing.sort());
  });
});
