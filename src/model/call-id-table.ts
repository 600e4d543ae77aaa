/**
 * The tool-call ids a run's messages took, kept as 32-bit hashes in an open-addressing table; a
 * hash found is confirmed by `isTaken`, which looks for the id itself (in the run's transcript).
 *
 * Why not a `Set` of the ids: the ids live in the transcript already, and a Set's entry for each
 * was about 27 bytes more per tool call for the life of the run: a long session (bench W4, one
 * call per turn) kept 137 bytes a turn (heap snapshots) against the reference's 123. A slot here
 * is 4 bytes, at most three quarters full. Why a hash of the whole id: a hash that collides costs
 * a look through the transcript, and ids that differ only somewhere the hash skipped would make
 * every lookup one.
 */
export class CallIdTable {
  private slots = new Int32Array(INITIAL_SLOTS);
  private count = 0;
  /** For an id renamed `<id>_<n>`: the next `n` to try (made at the first rename). Why: without it the k-th repeat of one id tried k names, each a look through the transcript. */
  private nextSuffixes: Map<string, number> | undefined;
  /**
   * The ids `isTaken` confirmed (made at the first). Why: a server that numbers its calls per
   * reply sends `call_0` every turn, and each look for it went through the transcript back to the
   * first turn: one run of 4,000 such turns took 135 µs a turn over the first 500 and 179 µs over
   * the last 500; with this, 100 µs and 24 µs (a script by hand, Node 20).
   */
  private repeated: Set<string> | undefined;

  /** `isTaken(id)`: whether a message the run keeps holds a tool call of that id. */
  constructor(private readonly isTaken: (id: string) => boolean) {}

  has(id: string): boolean {
    if (this.repeated?.has(id) === true) return true;
    const hash = hashOf(id);
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; this.slots[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.slots[slot] !== hash) continue;
      if (!this.isTaken(id)) return false;
      (this.repeated ??= new Set()).add(id);
      return true;
    }
    return false;
  }

  add(id: string): void {
    if ((this.count + 1) * 4 > this.slots.length * 3) this.grow();
    insert(this.slots, hashOf(id));
    this.count += 1;
  }

  /** A name `<base>_<n>` that neither this table nor `alsoTaken` holds, n from 2 up. */
  renamed(base: string, alsoTaken: ReadonlySet<string>): string {
    const nextSuffixes = (this.nextSuffixes ??= new Map());
    let suffix = nextSuffixes.get(base) ?? 2;
    while (alsoTaken.has(`${base}_${suffix}`) || this.has(`${base}_${suffix}`)) suffix += 1;
    nextSuffixes.set(base, suffix + 1);
    return `${base}_${suffix}`;
  }

  private grow(): void {
    const grown = new Int32Array(this.slots.length * 2);
    for (const hash of this.slots) if (hash !== 0) insert(grown, hash);
    this.slots = grown;
  }
}

const INITIAL_SLOTS = 16;

function insert(slots: Int32Array, hash: number): void {
  const mask = slots.length - 1;
  let slot = hash & mask;
  while (slots[slot] !== 0) slot = (slot + 1) & mask;
  slots[slot] = hash;
}

/** FNV-1a over the id's UTF-16 units; never 0, which marks an empty slot. */
function hashOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < id.length; index++) hash = Math.imul(hash ^ id.charCodeAt(index), 0x01000193);
  return hash | 1;
}
