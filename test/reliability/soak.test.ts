/**
 * Runs the soak script (test/reliability/soak.ts) in a child process with `--expose-gc` and
 * asserts on the JSON it prints.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

interface SoakReport {
  scriptedRuns: number;
  heapGrowthBytes: number;
  heapSamplesBytes: number[];
  sharedSignalListeners: number;
  realTimeRuns: number;
  realTimeLeftovers: string[];
  grammarProblems: string[];
  grammarProblemCount: number;
  totalMs: number;
}

describe("soak", () => {
  it("keeps the heap flat over 10,000 runs and leaves no handle, timer or listener behind", () => {
    const output = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", "test/reliability/soak.ts", "10000"], {
      encoding: "utf8",
      timeout: 120_000,
    });
    const report = JSON.parse(output) as SoakReport;
    console.log(`soak: ${JSON.stringify(report)}`);
    expect(report.grammarProblems).toStrictEqual([]);
    expect(report.grammarProblemCount).toBe(0);
    expect(report.sharedSignalListeners).toBe(0);
    expect(report.realTimeLeftovers).toStrictEqual([]);
    // Generous: a run's events and messages are kilobytes, so retaining even one per run would
    // add megabytes. What remains is JIT and allocator noise.
    expect(report.heapGrowthBytes).toBeLessThan(4 * 1024 * 1024);
    const first = report.heapSamplesBytes[0]!;
    const last = report.heapSamplesBytes[report.heapSamplesBytes.length - 1]!;
    expect(last - first).toBeLessThan(2 * 1024 * 1024);
  }, 180_000);
});
