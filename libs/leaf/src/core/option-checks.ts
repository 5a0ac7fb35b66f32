/** Problems found while resolving options; thrown together as one `LeafConfigurationError`. */
export type Problems = string[];

/**
 * An optional integer option: `fallback` when absent; a problem (and `fallback`) when it is
 * not an integer in `min..max`.
 */
export function checkedInt(
  problems: Problems,
  path: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    problems.push(`${path} must be an integer in ${min}..${max} (got ${String(value)})`);
    return fallback;
  }
  return value;
}
