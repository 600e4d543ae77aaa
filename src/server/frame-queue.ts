/**
 * A first-in first-out queue with O(1) `shift`: an array and a head index, compacted once the
 * consumed prefix outgrows the rest. Why not `Array.prototype.shift`: it moves every element,
 * so draining a long queue costs its length squared (a flooding client made the server deaf for
 * minutes that way).
 */
export class FrameQueue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) this.clear();
    else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  last(): T | undefined {
    return this.length === 0 ? undefined : this.items[this.items.length - 1];
  }

  replaceLast(item: T): void {
    this.items[this.items.length - 1] = item;
  }

  /** Keeps the items `keep` accepts, in order; returns how many were removed. */
  retain(keep: (item: T) => boolean): number {
    const before = this.length;
    this.items = this.items.slice(this.head).filter((item) => keep(item as T));
    this.head = 0;
    return before - this.items.length;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
