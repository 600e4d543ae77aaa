/**
 * Blocks this process's event loop for `ms`, as a machine at a load of 8 may: timers, sockets and
 * pipes wait, and what arrived meanwhile is read at once afterwards. For tests that must hold on
 * a busy machine (a lease that must not run out, messages that arrive in one read).
 */
export function stallEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}
