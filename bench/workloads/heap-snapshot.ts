import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";

interface SnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
}

/**
 * Bytes of the live heap but compiled code: takes a heap snapshot (V8 collects garbage first, so
 * it holds exactly the live objects) and sums the own size of every object whose node type is
 * not "code".
 *
 * Why besides `heapUsed`: compiled code, bytecode, feedback and deoptimization data are live
 * heap too, and the JIT makes and drops them while a loop runs, which moves `heapUsed` by
 * hundreds of kilobytes between readings. Slow (seconds per snapshot of a large heap), so it is
 * an option of the bench (`--heap-snapshots`).
 */
export function liveStateBytes(): number {
  const directory = mkdtempSync(join(tmpdir(), "rxagent-bench-"));
  try {
    const file = writeHeapSnapshot(join(directory, "heap.heapsnapshot"));
    const snapshot = JSON.parse(readFileSync(file, "utf8")) as SnapshotFile;
    const fields = snapshot.snapshot.meta.node_fields;
    const typeNames = snapshot.snapshot.meta.node_types[0];
    const typeField = fields.indexOf("type");
    const sizeField = fields.indexOf("self_size");
    let total = 0;
    for (let offset = 0; offset < snapshot.nodes.length; offset += fields.length) {
      if (typeNames[snapshot.nodes[offset + typeField]!] !== "code") total += snapshot.nodes[offset + sizeField]!;
    }
    return total;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
