/**
 * `node --import ./bench/typescript-loader.mjs bench/run.ts`: runs the bench's TypeScript without
 * tsx's `keepNames` (see typescript-hooks.mjs for why).
 */
import { register } from "node:module";

register("./typescript-hooks.mjs", import.meta.url);
