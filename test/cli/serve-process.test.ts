import { describe, expect, it } from "vitest";
import { startCli } from "./cli-process.js";

describe("rxagent serve", () => {
  it("serves the web UI on loopback, prints the URL, and stops on SIGINT", async () => {
    const cli = startCli(["serve", "--port", "0", "--delay", "0"]);
    await cli.waitFor((stdout) => /Serving the web UI at http:\/\/127\.0\.0\.1:\d+\//.test(stdout));
    expect(cli.stdout()).toMatch(/^rxagent · the offline demo model/);
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(cli.stdout())?.[1] ?? "";
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/html/);
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(0);
  });
});
