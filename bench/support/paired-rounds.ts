/**
 * Paired rounds of the same work with Leaf and with a same-run baseline (the ORM insert
 * benchmarks: Leaf IDs against the database's identity column): each round times both, in
 * alternating order, and its ratio is Leaf's rate ÷ the baseline's; the row's figure is the
 * median ratio with its 95 % interval, met when the interval's lower end reaches the target.
 */
import { ratioCell } from './http-load';
import { fmtRate, median, medianInterval, type BenchContext, type BenchRow } from './report';

/** One timed run of the work; resolves to rows (or items) per second. */
export type RatedWork = () => Promise<number>;

/** The rates of each side and the per-round ratios. */
export interface PairedRounds {
  readonly leaf: number[];
  readonly baseline: number[];
  readonly ratios: number[];
}

/**
 * A warm-up of each side (not timed), then `rounds` paired rounds, alternating which side
 * goes first; logs the medians under `label`.
 */
export async function pairedRounds(
  context: BenchContext,
  label: string,
  rounds: number,
  leaf: RatedWork,
  baseline: RatedWork,
  baselineName = 'identity',
): Promise<PairedRounds> {
  await leaf();
  await baseline();
  const result = { leaf: [] as number[], baseline: [] as number[], ratios: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    const leafFirst = round % 2 === 0;
    const first = leafFirst ? await leaf() : 0;
    const base = await baseline();
    const rate = leafFirst ? first : await leaf();
    result.leaf.push(rate);
    result.baseline.push(base);
    result.ratios.push(rate / base);
  }
  context.log(
    `${label}: ${rounds} rounds; Leaf ${fmtRate(median(result.leaf))}, ${baselineName} ${fmtRate(median(result.baseline))} rows/s`,
  );
  return result;
}

/** The table row of paired rounds: rows/s, the baseline's, the median ratio; met at ≥ `target`. */
export function pairedRow(
  measurement: string,
  r: PairedRounds,
  target = 0.95,
  baselineName = 'identity',
): BenchRow {
  // Met when the 95 % interval's lower end reaches the target (the median's, with too few rounds).
  const interval = medianInterval(r.ratios);
  const ratio = interval.low ?? interval.median;
  return {
    measurement,
    figure: `${fmtRate(median(r.leaf))} rows/s`,
    baseline: `${baselineName} ${fmtRate(median(r.baseline))} rows/s`,
    ratio: ratioCell(r.ratios),
    target: `≥ ${Math.round(target * 100)} %`,
    met: ratio >= target,
  };
}
