// `npm run bench` runs this first: the reference implementation lives in bench/'s own package,
// so the root `npm ci` (and CI) never installs it. Installed once, from bench/package-lock.json.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const benchDirectory = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(benchDirectory, "node_modules", "@mariozechner", "pi-agent-core", "package.json"))) {
  process.stderr.write("bench: installing the reference implementation (bench/package.json)...\n");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  execFileSync(npm, ["ci", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: benchDirectory, stdio: "inherit" });
}
