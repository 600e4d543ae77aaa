import { BehaviorSubject, type Observable, Subject } from "rxjs";

/**
 * A hot stream whose Subject is made when someone first asks for it. Why: a server may hold
 * thousands of idle agents, most never listened to, and a Subject per stream per agent adds up.
 * Values sent before anyone asked are not kept; asked for after `complete`, it completes at once.
 */
export class OnDemandSubject<T> {
  private subject: Subject<T> | undefined;
  private completed = false;

  get observable(): Observable<T> {
    return this.made().asObservable();
  }

  next(value: T): void {
    this.subject?.next(value);
  }

  complete(): void {
    this.completed = true;
    this.subject?.complete();
  }

  protected make(): Subject<T> {
    return new Subject<T>();
  }

  private made(): Subject<T> {
    if (!this.subject) {
      this.subject = this.make();
      if (this.completed) this.subject.complete();
    }
    return this.subject;
  }
}

/**
 * A current value and, made on demand, the `BehaviorSubject` that publishes it: the value is the
 * truth, readable at any time; a subscriber gets it, then every change.
 */
export class OnDemandValue<T> extends OnDemandSubject<T> {
  constructor(private current: T) {
    super();
  }

  get value(): T {
    return this.current;
  }

  override next(value: T): void {
    this.current = value;
    super.next(value);
  }

  protected override make(): Subject<T> {
    return new BehaviorSubject<T>(this.current);
  }
}
