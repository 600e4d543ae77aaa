/**
 * The test files that change what a module or a global is for the whole process: module mocks
 * (`vi.mock`), fake timers, spies on globals, OpenTelemetry's global context manager, environment
 * variables, process listeners. They run isolated (a fresh module graph per file); every other file
 * shares its worker's modules with the files before it (vitest.config.ts says why).
 * test/house/isolated-files.test.ts finds such files by what they call and checks they are listed.
 */
export const isolatedFiles = [
  "test/cli/pi-ai-model-choice.test.ts",
  "test/demo/demo-tools-clock.test.ts",
  "test/mcp/own-server.test.ts",
  "test/openai/request-bodies.test.ts",
  "test/operators/tool-calls/run-tool-call.test.ts",
  "test/operators/tool-calls/unreadable-tool-values.test.ts",
  "test/openai/openai-failures.test.ts",
  "test/otel/provider-http-spans.test.ts",
  "test/otel/span-events.test.ts",
  "test/otel/with-telemetry.test.ts",
  "test/pi-ai/from-pi-ai-failures.test.ts",
  "test/redis/acked-commands.test.ts",
  "test/redis/takeover-faults.test.ts",
  "test/reliability/arbitrary-agent-calls.test.ts",
  "test/reliability/arbitrary-hook-answers.test.ts",
  "test/reliability/async.test.ts",
  "test/server/jsonl-transcript-store-writes.test.ts",
  "test/streams/reference-parity.test.ts",
  "test/testing/cassette-model.test.ts",
  "test/util/detached-callback.test.ts",
];

/** What a file calls that makes it one of `isolatedFiles`. */
export const processWideChanges =
  /vi\.(mock|doMock|useFakeTimers|spyOn|stubGlobal|stubEnv)\(|useTracing\(|setGlobal[A-Za-z]*\(|delete process\.env|process\.env(\[[^\]]+\]|\.[A-Za-z_]+) *=[^=]|process\.on\(/;
