import { lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { agentLoop } from "../../src/index.js";
import { cassetteModel, parseCassette, recordingModel, recordsOfCassette, scriptedModel, type Cassette, type CassetteCall, type CassetteEvent } from "../../src/testing/index.js";
import type { AgentEvent, AssistantMessage } from "../../src/types.js";
import { userMessage } from "./fixtures.js";

async function recorded(): Promise<Cassette> {
  const recorder = recordingModel(scriptedModel(["Hi there"]));
  await lastValueFrom(recorder.stream({ messages: [userMessage("Hello")] }, { signal: new AbortController().signal }).pipe(toArray()));
  return recorder.cassette;
}
const jsonLines = (cassette: Cassette) => recordsOfCassette(cassette).map((record) => JSON.stringify(record)).join("\n");

describe("parseCassette", () => {
  it("reads a JSON document and JSON Lines alike", async () => {
    const cassette = await recorded();
    expect(cassette.calls[0]!.events.map((event) => event.event.type)).toStrictEqual(["start", "text_start", "text_delta", "text_delta", "text_end", "done"]);
    expect(parseCassette(JSON.stringify(cassette, null, 2))).toStrictEqual(cassette);
    expect(parseCassette(`${jsonLines(cassette)}\n`)).toStrictEqual(cassette);
  });

  it("drops a last line cut off by a crash, and names any other line that is not JSON", async () => {
    const lines = jsonLines(await recorded()).split("\n");
    const cut = [...lines.slice(0, -1), lines.at(-1)!.slice(0, 20)].join("\n");
    expect(parseCassette(cut).calls[0]!.events).toHaveLength(5);
    const broken = [lines[0], "{oops", ...lines.slice(1)].join("\n");
    expect(() => parseCassette(broken)).toThrow(/^Cassette line 2 is not JSON: /);
  });

  it("refuses another version, a missing header and an event without its call", async () => {
    const cassette = await recorded();
    expect(() => parseCassette(JSON.stringify({ ...cassette, version: 2 }))).toThrow("Unsupported cassette version 2; this rxagent reads version 1.");
    const lines = jsonLines(cassette).split("\n");
    expect(() => parseCassette(lines.slice(1).join("\n"))).toThrow('A cassette starts with a {"kind":"cassette"} record.');
    expect(() => parseCassette([lines[0], ...lines.slice(2)].join("\n"))).toThrow("Cassette event for call 0, which has no request record.");
  });


  it("names the call and event of a hand-edited cassette that went wrong", async () => {
    const cassette = await recorded();
    const edited = (edit: (copy: Cassette) => void) => {
      const copy = structuredClone(cassette);
      edit(copy);
      return JSON.stringify(copy);
    };
    expect(() => parseCassette(edited((copy) => delete (copy.calls[0]!.events[2] as Partial<CassetteEvent>).at))).toThrow("Cassette call 0, event 2: needs a time `at` of at least 0.");
    expect(() => parseCassette(edited((copy) => (copy.calls[0]!.events[1]!.event.type = "text_begin" as "text_start")))).toThrow('Cassette call 0, event 1: has an unknown event type "text_begin".');
    expect(() => parseCassette(edited((copy) => delete (copy.calls[0] as Partial<CassetteCall>).request))).toThrow("Cassette call 0 has no request with a list of messages.");
    expect(() => parseCassette(edited((copy) => delete (copy as Partial<Cassette>).model))).toThrow("A cassette needs a model with a string id, provider and api.");
    const lines = jsonLines(cassette).split("\n");
    expect(() => parseCassette([lines[0], lines[1]!.replace('"call":0', '"call":1')].join("\n"))).toThrow("Cassette call 0 is missing.");
    expect(() => cassetteModel(JSON.parse(edited((copy) => (copy.calls[0]!.events[0]!.at = -1))) as Cassette)).toThrow("Cassette call 0, event 0: needs a time `at` of at least 0.");
  });
});

describe("parseCassette and content lengths", () => {
  // Found by a crafted cassette: a line of a few bytes whose content length was 10^8 took 28 s to
  // replay, building an array of that length.
  it("refuses a content length that is not a count of the blocks the message had and those its changes bring", async () => {
    const cassette = await recorded();
    const withLength = (length: unknown) => {
      const copy = structuredClone(cassette);
      copy.calls[0]!.events[0]!.changes = { ...copy.calls[0]!.events[0]!.changes, content: { length: length as number } };
      return JSON.stringify(copy);
    };
    expect(() => parseCassette(withLength(1e9))).toThrow("Cassette call 0, event 0: has a content length 1000000000 that is not a count of the blocks the message had (0) and those its changes bring (0).");
    expect(() => parseCassette(withLength(-1))).toThrow("Cassette call 0, event 0: has a content length -1 that is not a count");
    expect(() => parseCassette(withLength(1.5))).toThrow("Cassette call 0, event 0: has a content length 1.5 that is not a count");
    expect(() => parseCassette(withLength("2"))).toThrow('Cassette call 0, event 0: has a content length "2" that is not a count');
    // What recordings write passes: each block the message gains comes with its changes.
    expect(parseCassette(withLength(0)).calls[0]!.events).toHaveLength(6);
    expect(parseCassette(JSON.stringify(cassette))).toStrictEqual(cassette);
  });
});

describe("recordingModel", () => {
  it("fails the model call, not the process, when its sink cannot write", async () => {
    const sink = { write: (record: { kind: string }) => {
      if (record.kind === "event") throw new Error("disk full");
    } };
    const model = recordingModel(scriptedModel(["Hi there"]), { sink });
    const events: AgentEvent[] = await lastValueFrom(agentLoop([userMessage("Hello")], { messages: [] }, { model }).pipe(toArray()));
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect((end.messages.at(-1) as AssistantMessage).stopReason).toBe("error");
    expect((end.messages.at(-1) as AssistantMessage).errorMessage).toBe("Model stream failed: disk full");
  });
});
