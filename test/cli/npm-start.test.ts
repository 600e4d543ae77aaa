import { describe, expect, it } from "vitest";
import { demoEnvironment, startCli } from "./cli-process.js";

describe("npm start (the README's first command)", () => {
  it("answers a piped prompt with the demo model and exits at end of input", async () => {
    const cli = startCli(["start"], { command: process.platform === "win32" ? "npm.cmd" : "npm", environment: demoEnvironment({ RXAGENT_DEMO_DELAY: "1" }) });
    cli.child.stdin.end("what is 12*7\n");
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toMatch(/rxagent · the offline demo model/);
    expect(cli.stdout()).toMatch(/⚙ calculator expression="12\*7"\n {2}✓ 12\*7 = 84\n12\*7 = 84\.\n/);
  });
});
