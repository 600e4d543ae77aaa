/**
 * How deep JSON from outside (a model's tool-call arguments, a tool's result, a client's frame)
 * may nest before it is refused. Why a limit at all: `JSON.parse` in V8 is iterative and takes
 * any depth, but `JSON.stringify`, `structuredClone`, TypeBox's `Value.*` and every recursive walk
 * overflow the stack somewhere between 2,000 and 10,000 levels (6,000 took `rxagent serve`
 * down, issue 27). Why 128: real arguments and results nest a handful of levels; 128 leaves
 * ample room and stays far below any stack's reach.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * True when `value` nests arrays and objects more than `limit` levels deep (`[]` and `{}` are one
 * level, a string or number none). Never recurses, so it cannot overflow the stack itself, and
 * stops at the first path that passes the limit.
 *
 * Why an explicit stack of iterators-by-index: it walks each container once and allocates one
 * entry per open level; a three-key object costs well under a microsecond (bench/json-depth.ts).
 */
export function nestsDeeperThan(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit < 1) return true;
  // Parallel stacks: the container at each open level and the children still to visit there.
  const containers: unknown[][] = [childrenOf(value as object)];
  const positions: number[] = [0];
  while (containers.length > 0) {
    const level = containers.length - 1;
    const children = containers[level]!;
    const position = positions[level]!;
    if (position === children.length) {
      containers.pop();
      positions.pop();
      continue;
    }
    positions[level] = position + 1;
    const child = children[position];
    if (typeof child !== "object" || child === null) continue;
    // The child opens level `containers.length + 1`.
    if (containers.length + 1 > limit) return true;
    containers.push(childrenOf(child));
    positions.push(0);
  }
  return false;
}

/**
 * True when JSON text opens more than `limit` arrays or objects at once (brackets inside strings
 * do not count). One pass, no allocation: cheap enough to run before any parse.
 */
export function textNestsDeeperThan(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return false;
}

/** How an error names the cause, after what nests: "arguments nest deeper than 128 levels". */
export function tooDeepText(limit: number = MAX_JSON_DEPTH): string {
  return `nest deeper than ${limit} levels`;
}

function childrenOf(container: object): unknown[] {
  return Array.isArray(container) ? container : Object.values(container);
}
