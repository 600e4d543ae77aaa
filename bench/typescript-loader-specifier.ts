/** What a bench passes to `node --import` for a child that runs TypeScript (see typescript-hooks.mjs). */
export const typeScriptLoader = new URL("./typescript-loader.mjs", import.meta.url).href;
