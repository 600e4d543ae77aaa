import { NEVER } from "rxjs";
import { describe, expect, it } from "vitest";
import { NextTurn, type Turn } from "../../src/streams/next-turn.js";
import type { RunState } from "../../src/streams/run-state.js";
import type { AgentMessage } from "../../src/types.js";
import { userMessage } from "../testing/fixtures.js";

function nextTurn() {
  const started: AgentMessage[][] = [];
  const run = {} as RunState;
  const next: NextTurn = new NextTurn(run, (startedBy, step) => {
    expect(startedBy).toBe(run);
    started.push(step.pending);
    return { events: NEVER, next: new NextTurn(run, () => ({ events: NEVER, next })) };
  });
  return { next, started };
}

function record(next: NextTurn) {
  const seen: string[] = [];
  next.subscribe({ next: (turn: Turn) => seen.push(`turn ${turn.events === NEVER}`), error: (error: unknown) => seen.push(`error ${String(error)}`), complete: () => seen.push("complete") });
  return seen;
}

describe("NextTurn", () => {
  const pending = [userMessage("steer")];

  it("emits the next turn, made from what was handed on, once completed, to a subscriber that came first", () => {
    const { next, started } = nextTurn();
    const seen = record(next);
    next.next({ type: "next_turn", pending });
    expect([seen, started]).toStrictEqual([[], []]);
    next.complete();
    expect([seen, started]).toStrictEqual([["turn true", "complete"], [pending]]);
  });

  it("serves a subscriber that comes after completion, and only completes when nothing was handed on", () => {
    const handed = nextTurn();
    handed.next.next({ type: "next_turn", pending });
    handed.next.complete();
    expect(record(handed.next)).toStrictEqual(["turn true", "complete"]);
    const ended = nextTurn();
    ended.next.next({ type: "end", reason: "idle" });
    ended.next.complete();
    expect([record(ended.next), ended.started]).toStrictEqual([["complete"], []]);
  });

  it("passes an error on", () => {
    const { next } = nextTurn();
    const seen = record(next);
    next.error("broken");
    expect(seen).toStrictEqual(["error broken"]);
  });
});
