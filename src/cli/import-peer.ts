import { RxAgentError } from "../errors.js";

/** An optional peer package (`openai`, `ws`) that a feature needs is not installed. */
export class MissingPeerError extends RxAgentError {
  constructor(
    readonly packageName: string,
    feature: string,
    cause: unknown,
  ) {
    super(`${feature} needs the package "${packageName}", which is not installed: npm i ${packageName}`, { cause });
  }
}

/**
 * Loads a module that depends on an optional peer, turning Node's "Cannot find package" into a
 * `MissingPeerError` that says what to install. Why lazily: a static import of a missing package
 * fails before any of the importing code runs, so the offline demo would need `openai` and `ws`.
 * @example const { serveWebUi } = await importPeer(() => import("../server/index.js"), "ws", "rxagent serve");
 */
export function importPeer<Module>(load: () => Promise<Module>, packageName: string, feature: string): Promise<Module> {
  return load().catch((error: unknown) => {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const missing = code === "ERR_MODULE_NOT_FOUND" && typeof message === "string" && message.includes(`'${packageName}'`);
    throw missing ? new MissingPeerError(packageName, feature, error) : error;
  });
}
