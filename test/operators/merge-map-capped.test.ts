import type { Observable } from "rxjs";
import { describe, it } from "vitest";
import { type ConcurrencyCap, mergeMapCapped } from "../../src/operators/merge-map-capped.js";
import { marbles } from "../helpers/marbles.js";

type Inners = Record<string, Observable<string>>;

/** `mergeMapCapped` over values named after their inner Observable, capped by name. */
function capped(inners: Inners, limit: number, caps: Record<string, ConcurrencyCap> = {}) {
  return mergeMapCapped<string, string>((name) => inners[name]!, limit, (name) => caps[name]);
}

describe("mergeMapCapped", () => {
  it(
    "without caps runs like mergeMap(project, limit): a value waits for one of the limit's slots",
    marbles((m) => {
      const source = m.cold("(abc|)");
      const inners = { a: m.cold("3ms a|"), b: m.cold("5ms b|"), c: m.cold("c|") };
      //  a  ^---!          runs at once
      //  b  ^-----!        runs at once
      //  c  ----^!         waits for a's slot (limit 2)
      m.expect(source.pipe(capped(inners, 2))).toBeObservable("3ms a c b |");
      m.expect(source).toHaveSubscriptions("(^!)");
      m.expect(inners.a).toHaveSubscriptions("^ 3ms !");
      m.expect(inners.b).toHaveSubscriptions("^ 5ms !");
      m.expect(inners.c).toHaveSubscriptions("4ms ^!");
    }),
  );

  it(
    "runs the values of one key at most `cap` at once, while values of no key use the free slots",
    marbles((m) => {
      const source = m.cold("(abc|)");
      const inners = { a: m.cold("3ms a|"), b: m.cold("1ms b|"), c: m.cold("2ms c|") };
      const caps = { a: { key: "k", cap: 1 }, b: { key: "k", cap: 1 } };
      //  a  ^---!          key k, runs at once
      //  b  ----^-!        key k: waits for a, though the limit (3) has room
      //  c  ^--!           no key: runs at once
      m.expect(source.pipe(capped(inners, 3, caps))).toBeObservable("2ms c a 1ms b |");
      m.expect(inners.a).toHaveSubscriptions("^ 3ms !");
      m.expect(inners.b).toHaveSubscriptions("4ms ^ 1ms !");
      m.expect(inners.c).toHaveSubscriptions("^ 2ms !");
    }),
  );

  it(
    "keeps the caps of different keys apart",
    marbles((m) => {
      const source = m.cold("(abcd|)");
      const inners = { a: m.cold("2ms a|"), b: m.cold("5ms b|"), c: m.cold("2ms c|"), d: m.cold("2ms d|") };
      const caps = { a: { key: "x", cap: 1 }, b: { key: "x", cap: 1 }, c: { key: "y", cap: 2 }, d: { key: "y", cap: 2 } };
      //  x (cap 1): a, then b from frame 3; y (cap 2): c and d together
      m.expect(source.pipe(capped(inners, 10, caps))).toBeObservable("2ms (acd) 1ms b|");
      m.expect(inners.b).toHaveSubscriptions("3ms ^ 5ms !");
      m.expect(inners.c).toHaveSubscriptions("^ 2ms !");
      m.expect(inners.d).toHaveSubscriptions("^ 2ms !");
    }),
  );

  it(
    "does not let a value waiting for its key hold one of the limit's slots",
    marbles((m) => {
      const source = m.cold("(abc|)");
      const inners = { a: m.cold("3ms a|"), b: m.cold("1ms b|"), c: m.cold("1ms c|") };
      const caps = { a: { key: "k", cap: 1 }, b: { key: "k", cap: 1 } };
      //  limit 2: a takes one slot; b waits for key k, so c takes the other at once
      m.expect(source.pipe(capped(inners, 2, caps))).toBeObservable("1ms c 1ms a 1ms b |");
      m.expect(inners.c).toHaveSubscriptions("^ 1ms !");
      m.expect(inners.b).toHaveSubscriptions("4ms ^ 1ms !");
    }),
  );

  it(
    "completes once the source has completed and every value has run",
    marbles((m) => {
      const source = m.cold("a 4ms b 4ms |");
      const inners = { a: m.cold("1ms a|"), b: m.cold("7ms b|") };
      m.expect(source.pipe(capped(inners, 1, { a: { key: "k", cap: 1 }, b: { key: "k", cap: 1 } }))).toBeObservable("1ms a 10ms b|");
      //  the source completes at frame 10, b runs on until 13
      m.expect(source).toHaveSubscriptions("^ 9ms !");
    }),
  );

  it(
    "tears down the source and every running value on unsubscribe",
    marbles((m) => {
      const source = m.cold("(ab) 20ms |");
      const inners = { a: m.cold("10ms a|"), b: m.cold("10ms b|") };
      m.expect(source.pipe(capped(inners, 1, { a: { key: "k", cap: 1 } })), "^ 4ms !").toBeObservable("");
      m.expect(source).toHaveSubscriptions("^ 4ms !");
      m.expect(inners.a).toHaveSubscriptions("^ 4ms !");
      m.expect(inners.b).toHaveSubscriptions([]);
    }),
  );

  it(
    "passes a value's error on and tears the others down",
    marbles((m) => {
      const source = m.cold("(ab) 20ms |");
      const inners = { a: m.cold("2ms #"), b: m.cold("10ms b|") };
      m.expect(source.pipe(capped(inners, 2, { a: { key: "k", cap: 1 } }))).toBeObservable("2ms #");
      m.expect(source).toHaveSubscriptions("^ 1ms !");
      m.expect(inners.b).toHaveSubscriptions("^ 1ms !");
    }),
  );

  it(
    "passes the source's error on and tears the running values down",
    marbles((m) => {
      const source = m.cold("a 2ms #");
      const inners = { a: m.cold("10ms a|") };
      m.expect(source.pipe(capped(inners, 2, { a: { key: "k", cap: 1 } }))).toBeObservable("3ms #");
      m.expect(inners.a).toHaveSubscriptions("^ 2ms !");
    }),
  );

  it(
    "passes a throwing capOf on as an error",
    marbles((m) => {
      const source = m.cold("a|");
      const throwing = mergeMapCapped<string, string>(
        () => m.cold("a|"),
        1,
        () => {
          throw new Error("no cap");
        },
      );
      m.expect(source.pipe(throwing)).toBeObservable("#", undefined, new Error("no cap"));
    }),
  );
});
