import { AsyncSubject, from, type Observable } from "rxjs";
import { errorText } from "../errors.js";
import type { AgentEvent } from "../types.js";

/**
 * A listener of `Agent.subscribe`: told every event of every run, with that run's abort signal.
 * It may return a Promise (any PromiseLike): the run's `Agent.run` and `Agent.waitForIdle` resolve
 * only once every Promise a listener returned for the run, its `agent_end` included, has settled.
 * @example agent.subscribe(async (event, signal) => { if (event.type === "message_end") await save(event.message, { signal }); });
 */
export type AgentListener<TOutput = unknown> = (event: AgentEvent<unknown, TOutput>, signal: AbortSignal) => void | PromiseLike<unknown>;

/** One listener's place in one run: whether its last call is still working, and the events waiting behind it. */
interface Delivery<TOutput> {
  working: boolean;
  backlog: AgentEvent<unknown, TOutput>[];
}

/**
 * Hands one run's events to an `Agent`'s listeners, each listener in event order: a listener that
 * returned a Promise gets its next event once that Promise settles, as pi-agent-core awaits
 * each listener. A listener that returns nothing is called at once, during the event.
 *
 * Why the loop does not wait for listeners, as the reference's does: the loop's events are
 * synchronous and its tools and model calls run on; a listener that awaits sees the state as it
 * is when its turn comes, not as the event left it (the event itself carries what it needs).
 *
 * Contract: `settled()` completes once the run ended (`end`, called with `agent_end` or by a
 * teardown) and no listener is still working on the run's events. A listener that throws or
 * rejects is reported to `onError` and gets its next event as usual.
 */
export class RunListeners<TOutput> {
  private readonly deliveries = new Map<AgentListener<TOutput>, Delivery<TOutput>>();
  private working = 0;
  private ended = false;
  private isSettled = false;
  private readonly settledSubject = new AsyncSubject<void>();

  constructor(
    private readonly listeners: ReadonlySet<AgentListener<TOutput>>,
    readonly controller: AbortController,
    private readonly onError: (message: string) => void,
  ) {}

  /** Calls each listener registered now with `event`, or queues it behind the listener's last call. */
  deliver(event: AgentEvent<unknown, TOutput>): void {
    for (const listener of this.listeners) {
      let delivery = this.deliveries.get(listener);
      if (!delivery) this.deliveries.set(listener, (delivery = { working: false, backlog: [] }));
      if (delivery.working) delivery.backlog.push(event);
      else this.callFrom(listener, delivery, event);
    }
    if (event.type === "agent_end") this.end();
  }

  /** No more events come: `settled()` completes once the listeners are done. */
  end(): void {
    this.ended = true;
    this.settleIfDone();
  }

  settled(): Observable<void> {
    return this.settledSubject.asObservable();
  }

  /** Calls `listener` with `event`, then with what waits behind it, until a call returns a Promise. */
  private callFrom(listener: AgentListener<TOutput>, delivery: Delivery<TOutput>, event: AgentEvent<unknown, TOutput>): void {
    for (let next: AgentEvent<unknown, TOutput> | undefined = event; next !== undefined; next = delivery.backlog.shift()) {
      // A listener unsubscribed while its events waited gets none of them.
      if (!this.listeners.has(listener)) {
        delivery.backlog.length = 0;
        return;
      }
      const current = next;
      const pending = this.call(listener, current);
      if (pending) {
        delivery.working = true;
        this.working += 1;
        from(pending).subscribe({
          error: (error: unknown) => {
            this.report(current, error);
            this.resume(listener, delivery);
          },
          complete: () => this.resume(listener, delivery),
        });
        return;
      }
    }
  }

  private call(listener: AgentListener<TOutput>, event: AgentEvent<unknown, TOutput>): PromiseLike<unknown> | undefined {
    try {
      const result = listener(event, this.controller.signal);
      return isPromiseLike(result) ? result : undefined;
    } catch (error) {
      this.report(event, error);
      return undefined;
    }
  }

  private resume(listener: AgentListener<TOutput>, delivery: Delivery<TOutput>): void {
    delivery.working = false;
    this.working -= 1;
    const next = delivery.backlog.shift();
    if (next) this.callFrom(listener, delivery, next);
    this.settleIfDone();
  }

  private settleIfDone(): void {
    if (!this.ended || this.working > 0 || this.isSettled) return;
    this.isSettled = true;
    this.settledSubject.next();
    this.settledSubject.complete();
  }

  private report(event: AgentEvent<unknown, TOutput>, error: unknown): void {
    this.onError(`A subscribe() listener failed on ${event.type}: ${errorText(error)}`);
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
