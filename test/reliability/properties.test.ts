/**
 * Property-based tests of the loop's invariants: random turns, tool fan-out with failures and
 * timeouts, hooks, steering, follow-ups, aborts and unsubscribes, all in virtual time.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { allProblems } from "./invariants.js";
import { runScenario } from "./run-scenario.js";
import { scenarioArbitrary, type Scenario } from "./scenario.js";

/** Fails with the problems found; fast-check adds the shrunk scenario. */
function holds(scenario: Scenario): void {
  const run = runScenario(scenario);
  const problems = allProblems(scenario, run);
  if (problems.length > 0) {
    throw new Error(`${problems.join("\n")}\nEvents: ${run.events.map((event) => event.type).join(", ")}`);
  }
}

// Why 120 s and not the suite's 30 s: each property is 1,500 synchronous runs, 2-5 s on an idle
// core, and one took 31.6 s at load 11. Vitest cannot stop a synchronous test, so the limit only
// decides whether a slow pass counts as a failure; a wedged run would never return either way.
describe("agentLoop invariants (property-based, virtual time)", { timeout: 120_000 }, () => {
  it("hold in runs that end on their own", () => {
    fc.assert(fc.property(scenarioArbitrary({ stops: ["none"] }), holds), { numRuns: 1500 });
  });

  it("hold in runs aborted at a random time", () => {
    fc.assert(fc.property(scenarioArbitrary({ stops: ["abort"] }), holds), { numRuns: 1500 });
  });

  it("hold in runs unsubscribed at a random time", () => {
    fc.assert(fc.property(scenarioArbitrary({ stops: ["unsubscribe"] }), holds), { numRuns: 1500 });
  });
});
