/** Small helpers shared by the benchmark scripts: formatting and target checks. */

/** Formats a number with thousands separators. */
export function fmt(value: number, digits = 0): string {
  return value.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
}

/** One line of a ratio against its baseline and target, e.g. `93.1 % of baseline (target ≥ 85 %) OK`. */
export function ratioLine(label: string, value: number, baseline: number, target: number): string {
  const ratio = value / baseline;
  const verdict = ratio >= target ? 'OK' : 'BELOW TARGET';
  return `${label.padEnd(44)} ${(ratio * 100).toFixed(1).padStart(6)} % of baseline (target >= ${(target * 100).toFixed(0)} %) ${verdict}`;
}

/** Median of a list. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
