/** Median, min and max of a sample, plus its size. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new RangeError("summarize: no values");
  const sorted = [...values].sort((left, right) => left - right);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, n: sorted.length };
}

/**
 * Ratios of paired reps (`numerators[i] / denominators[i]`), summarized.
 *
 * Why pairs: reps of the two implementations are interleaved, so each pair saw the same machine
 * state (frequency, other load); the median of pair ratios is steadier than a ratio of medians.
 */
export function pairedRatios(numerators: readonly number[], denominators: readonly number[]): Summary {
  if (numerators.length !== denominators.length) throw new RangeError("pairedRatios: unpaired samples");
  return summarize(numerators.map((value, index) => value / denominators[index]!));
}

/** Maps every value of a summary (e.g. milliseconds per run to nanoseconds per event). */
export function scaleSummary(summary: Summary, factor: number): Summary {
  return { median: summary.median * factor, min: summary.min * factor, max: summary.max * factor, n: summary.n };
}

/** A single derived number as a summary. */
export function point(value: number): Summary {
  return { median: value, min: value, max: value, n: 1 };
}
