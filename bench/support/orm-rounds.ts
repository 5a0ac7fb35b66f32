/**
 * What the ORM insert benchmarks share (bench/orm-*.bench.ts): inserts with Leaf IDs against
 * the database's own identity column through the same ORM, timed as rows per second in
 * paired rounds (alternating which goes first), reported as the median of the per-round
 * ratios with its 95 % interval, met when the interval's lower end reaches 95 %.
 */
import { performance } from 'node:perf_hooks';
import { ratioCell } from './http-load';
import { fmtRate, median, medianInterval, type BenchContext, type BenchRow } from './report';

/** Rows per batch in the batch measurements. */
export const BATCH = 500;

/** The rates of paired rounds: Leaf's, the identity's, and Leaf ÷ identity per round. */
export interface PairedRates {
  readonly leaf: number[];
  readonly identity: number[];
  readonly ratios: number[];
}

/** Single rows and batches per timed run, and rounds, for `context` (`--quick`: 1 round). */
export function insertSizes(context: BenchContext): {
  rounds: number;
  singles: number;
  batches: number;
} {
  return context.quick
    ? { rounds: 1, singles: 200, batches: 4 }
    : { rounds: 9, singles: 2000, batches: 20 };
}

/** Runs `insert(i)` for i < `count`, one after the other; returns rows per second. */
export async function rowsPerSecond(
  count: number,
  rowsEach: number,
  insert: (i: number) => Promise<unknown>,
): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i++) await insert(i);
  return (count * rowsEach) / ((performance.now() - start) / 1000);
}

/**
 * One warm-up of each (not timed), then `rounds` paired rounds of `leaf` and `identity`,
 * alternating which goes first; logs the medians under `label`.
 */
export async function pairedRounds(
  context: BenchContext,
  label: string,
  rounds: number,
  leaf: () => Promise<number>,
  identity: () => Promise<number>,
): Promise<PairedRates> {
  await leaf();
  await identity();
  const result = { leaf: [] as number[], identity: [] as number[], ratios: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    const leafFirst = round % 2 === 0;
    const first = leafFirst ? await leaf() : 0;
    const base = await identity();
    const ours = leafFirst ? first : await leaf();
    result.leaf.push(ours);
    result.identity.push(base);
    result.ratios.push(ours / base);
  }
  context.log(
    `${label}: ${rounds} rounds; Leaf ${fmtRate(median(result.leaf))}, identity ${fmtRate(median(result.identity))} rows/s`,
  );
  return result;
}

/** The table row of `rates`: target ≥ 95 %, met when the 95 % interval's lower end reaches it (the median's, with too few rounds). */
export function pairedRow(measurement: string, rates: PairedRates): BenchRow {
  const interval = medianInterval(rates.ratios);
  const ratio = interval.low ?? interval.median;
  return {
    measurement,
    figure: `${fmtRate(median(rates.leaf))} rows/s`,
    baseline: `identity ${fmtRate(median(rates.identity))} rows/s`,
    ratio: ratioCell(rates.ratios),
    target: '≥ 95 %',
    met: ratio >= 0.95,
  };
}
