import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take longest, slowest first, as a quiet run of the whole suite measured them
 * (2026-12-02: each 5 s or more; the rest together take about 25 s over 140 files).
 *
 * Why: a clean clone (CI, a newcomer's first `npm test`) has no vitest cache of durations, so vitest
 * runs files in glob order, and a 30 s file that starts last keeps the run going alone on one worker
 * while the others idle. Started first, the long files overlap each other and the short ones fill in.
 */
const slowestFirst = [
  "test/house/type-check.test.ts",
  "test/docs/snippets.test.ts",
  "test/redis/runner-deaths.test.ts",
  "test/redis/serve-redis.test.ts",
  "test/server/web-ui-tool-controls.test.ts",
  "test/reliability/soak.test.ts",
  "test/cli/mcp-flags.test.ts",
  "test/cli/replay-process.test.ts",
  "test/tools/json-schema-loader.test.ts",
  "test/cli/chat-process.test.ts",
  "test/redis/redis-sessions.test.ts",
  "test/tools/typebox-loader.test.ts",
  "test/reliability/properties.test.ts",
  "test/docs/first-agent.test.ts",
  "test/cli/model-from-environment.test.ts",
  "test/cli/serve-process.test.ts",
  "test/redis/chaos.test.ts",
  "test/cli/serve-ai-sdk.test.ts",
  "test/server/flood.test.ts",
  "test/ai-sdk/use-chat-browser.test.ts",
  "test/mcp/everything-server.test.ts",
  "test/cli/pi-ai-model-choice.test.ts",
  "test/client/delta-frames.test.ts",
  "test/server/web-ui-sub-agent.test.ts",
  "test/server/web-ui.test.ts",
  "test/cli/otel-flag.test.ts",
  "test/server/descriptor-limit.test.ts",
];

/** Vitest's own order (its cache of durations when it has one), with the known slow files first. */
export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = slowestFirst.indexOf(path.relative(file.project.config.root, file.moduleId).split(path.sep).join("/"));
      return index < 0 ? slowestFirst.length : index;
    };
    return sorted.map((file, order) => ({ file, order, rank: rank(file) })).sort((a, b) => a.rank - b.rank || a.order - b.order).map(({ file }) => file);
  }
}
