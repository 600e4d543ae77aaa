import { runScript } from "./fresh-process.js";

/**
 * Runs `script` in a fresh process (`runScript`) with V8's natives allowed and two functions
 * defined before it: `sameHiddenClass(a, b)` and `optimizeNow(fn, warm)`, V8's own answers, through
 * `new Function` because the `%` calls are not TypeScript.
 *
 * Why V8's internals in a test: the cost they catch (every object of one kind with a hidden class
 * of its own, src/util/with-field.ts) shows in no result, only in time and in `%HaveSameMap`.
 */
export function runWithHiddenClassProbe(script: string): ReturnType<typeof runScript> {
  return runScript(`${hiddenClassProbe}\n${script}`, { nodeOptions: ["--allow-natives-syntax"] });
}

const hiddenClassProbe = `
const sameHiddenClass = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
const prepare = new Function("f", "%PrepareFunctionForOptimization(f)") as (f: Function) => void;
const optimizeNextCall = new Function("f", "%OptimizeFunctionOnNextCall(f)") as (f: Function) => void;
/** Runs \`warm\` (which calls \`fn\`) to collect feedback, has V8 optimize \`fn\`, and runs \`warm\` once more with it optimized. */
function optimizeNow(fn: Function, warm: () => void): void {
  prepare(fn);
  for (let round = 0; round < 3; round++) warm();
  optimizeNextCall(fn);
  warm();
}
if (sameHiddenClass({ a: 1 }, { b: 1 }) || !sameHiddenClass({ a: 1 }, { a: 2 })) throw new Error("the probe cannot tell hidden classes apart");
`;
