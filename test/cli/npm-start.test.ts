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

  it("shows the demo's researcher, a sub-agent, working under its call: its own model reads a file and the agent answers from its report", async () => {
    const cli = startCli(["start"], { command: process.platform === "win32" ? "npm.cmd" : "npm", environment: demoEnvironment({ RXAGENT_DEMO_DELAY: "1" }) });
    cli.child.stdin.end("research what package.json says\n");
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toMatch(
      /⚙ researcher task="what package\.json says"\n {2}│ researcher › Let me use the read file tool\.\n {2}│ researcher ⚙ read_file path="package\.json"\n {2}│ researcher ✓ package\.json · \d+ lines · \d+ bytes\n {2}│ researcher › package\.json has \d+ lines/,
    );
    expect(cli.stdout()).toMatch(/\nThe researcher \(a sub-agent\) reports: package\.json has \d+ lines/);
  });
});
