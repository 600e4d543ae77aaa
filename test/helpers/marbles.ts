import { expect } from "vitest";
import { configure } from "rxjs-marbles";

export const { marbles } = configure({
  assertDeepEqual: (actual, expected) => expect(actual).toStrictEqual(expected),
  frameworkMatcher: true,
});
