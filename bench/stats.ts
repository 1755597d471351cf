// Order statistics for benchmark samples. Medians and ranges, never means alone: on a
// noisy machine one slow sample moves a mean but not a median.

/** One run's samples, reduced. Units are the caller's. */
export interface Summary {
  n: number;
  median: number;
  p99: number;
  min: number;
  max: number;
}

/** One figure over several runs: the median of the per-run values, their range, and each. */
export interface Figure {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

// The value at quantile q (0..1) of sorted values, nearest-rank.
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: median(sorted),
    p99: quantile(sorted, 0.99),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

export function figure(runs: readonly number[]): Figure {
  const finite = runs.filter((value) => Number.isFinite(value));
  return {
    median: median(finite),
    min: finite.length ? Math.min(...finite) : Number.NaN,
    max: finite.length ? Math.max(...finite) : Number.NaN,
    runs: [...runs],
  };
}
