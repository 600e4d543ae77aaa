import { defineConfig } from "vitest/config";

// The tier that installs packages from the registry (npm pack, npm install): run by
// `npm run test:package` and by CI, never by `npm test`, which stays offline.
export default defineConfig({
  test: {
    include: ["test/package/**/*.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
