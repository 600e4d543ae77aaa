import { type RunHelpers, TestScheduler } from "rxjs/testing";

/** What a marble test body gets: rxjs's run helpers and the scheduler to hand to models and runs. */
export interface MarbleHelpers extends RunHelpers {
  /** Pass it as `scheduler` to `scriptedModel` and to the run config, so they keep virtual time. */
  scheduler: TestScheduler;
}

/**
 * Makes a `marbles(body)` wrapper for one's test framework: each call returns a test function
 * that runs `body` in a fresh `TestScheduler` in run mode (virtual time; `expectObservable`
 * assertions are checked when the body returns), comparing with `assertDeepEqual`.
 *
 * Written on rxjs's own `TestScheduler`, so it needs no test library beyond one's framework.
 * @example
 * const marbles = configureMarbles((actual, expected) => expect(actual).toStrictEqual(expected));
 * it("replies", marbles(({ scheduler, expectObservable }) => { ... }));
 */
export function configureMarbles(
  assertDeepEqual: (actual: unknown, expected: unknown) => void,
): (body: (helpers: MarbleHelpers) => void) => () => void {
  return (body) => () => {
    const scheduler = new TestScheduler(assertDeepEqual);
    scheduler.run((helpers) => body({ ...helpers, scheduler }));
  };
}
