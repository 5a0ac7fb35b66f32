/**
 * The residue class of a database's ranges when several databases serve one tag
 * (docs/design.md, "Several databases per tag"): a range `[start, end)` granted by a row with
 * class `(modulus, residue)` is served only as the IDs `x` in it with `x ≡ residue (mod
 * modulus)`. `(1, 0)` is every ID: one database, today's behaviour.
 */
export interface ResidueClass {
  /** `id_modulus` of the row: a positive integer. */
  readonly modulus: number;
  /** `id_residue` of the row: `0 ≤ residue < modulus`. */
  readonly residue: number;
}

/** Largest modulus accepted (far more databases than anyone runs; keeps steps meaningful). */
export const MAX_MODULUS = 1024;

/** Why `c` is not a valid class, or `null` when it is. */
export function residueClassProblem(c: ResidueClass): string | null {
  if (!Number.isSafeInteger(c.modulus) || c.modulus < 1 || c.modulus > MAX_MODULUS) {
    return `id_modulus ${c.modulus} is not an integer in 1..${MAX_MODULUS}`;
  }
  if (!Number.isSafeInteger(c.residue) || c.residue < 0 || c.residue >= c.modulus) {
    return `id_residue ${c.residue} is not an integer in 0..${c.modulus - 1}`;
  }
  return null;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * True when some ID belongs to both classes: `a.residue ≡ b.residue (mod gcd(a.modulus,
 * b.modulus))` (Chinese remainder theorem). Two databases of one tag must never intersect.
 */
export function classesIntersect(a: ResidueClass, b: ResidueClass): boolean {
  return (a.residue - b.residue) % gcd(a.modulus, b.modulus) === 0;
}

/** The smallest ID `≥ start` in the class (a stride of 1 returns `start`). */
export function firstInClass(start: bigint, stride: bigint, residue: bigint): bigint {
  if (stride === 1n) return start;
  const offset = (((residue - start) % stride) + stride) % stride;
  return start + offset;
}

/**
 * How many IDs of the class lie in `[from, to)`, where `from` is itself in the class (or any
 * value for a stride of 1).
 */
export function idsFrom(from: bigint, to: bigint, stride: bigint): number {
  if (to <= from) return 0;
  return Number((to - from + stride - 1n) / stride);
}

/**
 * The key of a tag's high-water mark for the database of `residue`: the tag itself for
 * residue 0 (the one database of a single-database deployment keeps its mark when a second
 * database is added), `tag#r` otherwise (`#` is not allowed in a tag, so keys cannot clash).
 */
export function highWaterKey(tag: string, residue: number): string {
  return residue === 0 ? tag : `${tag}#${residue}`;
}

/** True when `id` is in the class `residue (mod modulus)`; no class (absent) holds every ID. */
export function inResidueClass(id: bigint, c: { modulus?: number; residue?: number }): boolean {
  if (c.modulus === undefined || c.modulus < 1) return true;
  return id % BigInt(c.modulus) === BigInt(c.residue ?? 0);
}

/** The class of a row or range: its `id_modulus`/`id_residue`, or every ID (1, 0) without. */
export function residueClassOf(row: { modulus?: number; residue?: number }): ResidueClass {
  return { modulus: row.modulus ?? 1, residue: row.residue ?? 0 };
}
