import { defineConfig } from "vitest/config";
import SlowestFirstSequencer from "./test/helpers/slowest-first.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests that install from the registry run apart (`npm run test:package`, vitest.package.config.ts),
    // so `npm test` stays offline.
    exclude: ["test/package/**", "**/node_modules/**"],
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
  },
});
