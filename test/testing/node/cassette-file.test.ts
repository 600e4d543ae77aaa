import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCassette } from "../../../src/testing/index.js";
import { readCassette } from "../../../src/testing/node/index.js";

const recorded = join(import.meta.dirname, "../../fixtures/cassettes/calculator.cassette.jsonl");

describe("readCassette", () => {
  it("reads a recorded cassette as its whole text parses", () => {
    const cassette = readCassette(recorded);
    expect(cassette.calls.length).toBeGreaterThan(0);
    expect(cassette).toStrictEqual(parseCassette(readFileSync(recorded, "utf8")));
  });

  // readFileSync of /dev/zero never ends: it held 2.1 GB after 2 s (a 4 GB address-space limit
  // stopped it there) and would fill the memory of a machine without one.
  it("stops reading a file that never ends at maxBytes, with an error that says so", () => {
    expect(() => readCassette("/dev/zero", { maxBytes: 1024 * 1024 })).toThrow("/dev/zero holds more than 1048576 bytes, more than a cassette may (maxBytes).");
  });

  it("refuses a regular file larger than maxBytes before reading it, and a folder", () => {
    const folder = mkdtempSync(join(tmpdir(), "rxagent-cassette-"));
    const file = join(folder, "big.cassette.jsonl");
    writeFileSync(file, "x".repeat(2048));
    expect(() => readCassette(file, { maxBytes: 1024 })).toThrow(`${file} holds more than 1024 bytes`);
    expect(() => readCassette(folder)).toThrow(`${folder} is a folder, not a cassette file.`);
  });
});
