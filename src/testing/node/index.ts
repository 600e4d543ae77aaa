/** `rxagent/testing/node` (Node only): cassette files, kept apart so `rxagent/testing` stays browser-safe. */
export { cassetteFileSink, MAX_CASSETTE_BYTES, readCassette, writeCassette } from "./cassette-file.js";
export type { CassetteFileSink } from "./cassette-file.js";
