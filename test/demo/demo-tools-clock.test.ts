import { from, isObservable, lastValueFrom, type Observable } from "rxjs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoTools } from "../../src/demo/demo-tools.js";
import type { AgentTool, AgentToolResult } from "../../src/types.js";

const clockOf = (timeZone?: string) => demoTools({ stepDelay: 0, ...(timeZone === undefined ? {} : { timeZone }) }).find((tool) => tool.name === "clock") as AgentTool;

/** The tool's result, or the message of its error (which the loop turns into an error result). */
async function tell(clock: AgentTool, args: { timeZone?: string }): Promise<AgentToolResult | string> {
  try {
    const output = clock.execute("call_1", args as never, { signal: new AbortController().signal, update: () => undefined });
    return await lastValueFrom(isObservable(output) ? (output as Observable<AgentToolResult>) : from(Promise.resolve(output)));
  } catch (error) {
    return (error as Error).message;
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("clock, the demo's time tool", () => {
  it("makes its formats when the tools are made: a call in the default zone asks Intl for nothing (a process's first Intl call stalls it)", async () => {
    const clock = clockOf("Europe/Paris");
    const made = vi.spyOn(Intl, "DateTimeFormat");
    const result = await tell(clock, {});
    expect(made).not.toHaveBeenCalled();
    expect(result).toMatchObject({ details: { timeZone: "Europe/Paris" } });
  });

  it("tells the time in the default zone, or in the zone asked for", async () => {
    const clock = clockOf("UTC");
    const own = (await tell(clock, {})) as AgentToolResult<{ timeZone: string; time: string }>;
    const tokyo = (await tell(clock, { timeZone: "Asia/Tokyo" })) as AgentToolResult<{ timeZone: string; epochMs: number; time: string }>;
    expect(own.details.timeZone).toBe("UTC");
    expect(tokyo.details.timeZone).toBe("Asia/Tokyo");
    expect(tokyo.details.time).toBe(new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Tokyo", timeStyle: "medium" }).format(tokyo.details.epochMs));
  });

  it("an unknown zone, asked for or given as the default, is the call's error, not an error when the tools are made", async () => {
    expect(await tell(clockOf("UTC"), { timeZone: "Mars/Olympus" })).toMatch(/Mars\/Olympus/);
    const clock = clockOf("Nowhere/Atall");
    expect(await tell(clock, {})).toMatch(/Nowhere\/Atall/);
  });
});
