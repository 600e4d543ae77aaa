import { describe, expect, it } from "vitest";
import { BatchInterruption, type InterruptionListener } from "../../../src/operators/tool-calls/tool-batch.js";

function listener(name: string, heard: string[], onInterrupted?: () => void): InterruptionListener {
  return {
    interrupted: (reason) => {
      heard.push(`${name}: ${reason}`);
      onInterrupted?.();
    },
  };
}

describe("BatchInterruption", () => {
  it("tells its listeners once, in the order they came, and not one that stopped listening", () => {
    const interruption = new BatchInterruption();
    const heard: string[] = [];
    const [first, second, third] = [listener("first", heard), listener("second", heard), listener("third", heard)];
    interruption.listen(first);
    interruption.listen(second);
    interruption.listen(third);
    interruption.stopListening(second);
    interruption.interrupt("stop");
    interruption.interrupt("again");
    expect(heard).toStrictEqual(["first: stop", "third: stop"]);
  });

  it("tells a listener that an earlier one unsubscribes while it is told, and one that comes after at once", () => {
    const interruption = new BatchInterruption();
    const heard: string[] = [];
    const last = listener("last", heard);
    interruption.listen(listener("first", heard, () => interruption.stopListening(last)));
    interruption.listen(last);
    interruption.interrupt("stop");
    interruption.listen(listener("late", heard));
    expect(heard).toStrictEqual(["first: stop", "last: stop", "late: stop"]);
  });

  it("keeps its list whole as listeners leave from the front, the middle and the back, and may listen again", () => {
    const interruption = new BatchInterruption();
    const heard: string[] = [];
    const listeners = ["a", "b", "c", "d", "e"].map((name) => listener(name, heard));
    for (const each of listeners) interruption.listen(each);
    interruption.stopListening(listeners[0]!);
    interruption.stopListening(listeners[2]!);
    interruption.stopListening(listeners[4]!);
    interruption.stopListening(listeners[4]!);
    interruption.listen(listeners[0]!);
    interruption.interrupt("stop");
    expect(heard).toStrictEqual(["b: stop", "d: stop", "a: stop"]);
  });

  it("lets a listener of another batch stop listening here without effect", () => {
    const mine = new BatchInterruption();
    const other = new BatchInterruption();
    const heard: string[] = [];
    const listening = listener("mine", heard);
    mine.listen(listening);
    other.stopListening(listening);
    mine.interrupt("stop");
    expect(heard).toStrictEqual(["mine: stop"]);
  });
});
