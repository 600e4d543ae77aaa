import path from "node:path";
import { build } from "esbuild";

/** The page's script, bundled with React, @ai-sdk/react and ai from node_modules (about a second). */
export async function bundleChatPage(): Promise<string> {
  const result = await build({
    entryPoints: [path.join(import.meta.dirname, "chat-page.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "chrome120",
    minify: true,
    define: { "process.env.NODE_ENV": '"production"' },
    write: false,
    logLevel: "warning",
  });
  return result.outputFiles[0]!.text;
}

export const CHAT_PAGE_HTML = `<!doctype html><html><head><meta charset="utf-8"><title>useChat → rxagent</title>
<style>body{font:15px system-ui;margin:24px;max-width:760px}.message{border:1px solid #ccc;border-radius:8px;padding:8px 12px;margin:8px 0}
.message.user{background:#eef4ff}.tool{background:#f6f6f6;padding:6px;border-radius:6px}.tool code{display:block;white-space:pre-wrap}
#status{color:#555}</style></head><body><div id="root"></div><script type="module" src="/page.js"></script></body></html>`;
