// Summary statistics and number formatting shared by every benchmark.

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array (p in 0..100). */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = Float64Array.from(values).sort();
  const list = Array.from(sorted);
  let total = 0;
  for (const v of list) total += v;
  return {
    count: list.length,
    p50: percentile(list, 50),
    p99: percentile(list, 99),
    max: list.length ? (list[list.length - 1] ?? Number.NaN) : Number.NaN,
    mean: list.length ? total / list.length : Number.NaN,
  };
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** A number with a sensible count of digits for a table cell. */
export function fmt(value: number, digits?: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (digits !== undefined) return value.toFixed(digits);
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

/** `measured / baseline` as "0.93×". */
export function ratio(measured: number, baseline: number): string {
  if (!Number.isFinite(measured) || !Number.isFinite(baseline) || baseline === 0) return 'n/a';
  return `${(measured / baseline).toFixed(2)}×`;
}

export function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}
