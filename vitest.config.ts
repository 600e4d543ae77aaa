import { defineConfig } from "vitest/config";
import { isolatedFiles } from "./test/helpers/isolated-files.js";
import SlowestFirstSequencer from "./test/helpers/slowest-first.js";

const excluded = ["test/package/**", "**/node_modules/**"];

export default defineConfig({
  test: {
    // Tests that install from the registry run apart (`npm run test:package`, vitest.package.config.ts),
    // so `npm test` stays offline.
    exclude: excluded,
    // Vitest's default on 2 cores is one worker, which idles while a file waits on a child process,
    // a server or Redis (most of the slow files do); three overlap those waits.
    maxWorkers: 3,
    // Bundles the CLI once for the tests that start it (test/cli/cli-process.ts).
    globalSetup: ["test/helpers/build-cli.ts"],
    setupFiles: ["test/helpers/load-validators.ts"],
    // A clean clone has no cache of durations: the long files start first (test/helpers/slowest-first.ts).
    sequence: { sequencer: SlowestFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for a condition; its default of 1 s is a timing margin that a page under a
    // load of 8 can miss. A passing poll returns as soon as it holds, so a longer limit costs nothing.
    expect: { poll: { timeout: 15_000 } },
    projects: [
      {
        extends: true,
        // Why shared: isolated, each of the ~200 files loaded src/ and its packages again (setup and
        // import summed 287 s of the suite's 329 s at CI's load; the whole run took 174 s without).
        // Files that change process-wide things stay isolated (test/helpers/isolated-files.ts).
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: [...excluded, ...isolatedFiles], isolate: false },
      },
      { extends: true, test: { name: "isolated", include: isolatedFiles, isolate: true } },
    ],
  },
});
