/**
 * The shape every benchmark shares: a module returns rows (a figure next to its same-run
 * baseline and its target); `runBenchmarks` (./run.ts) runs modules in sequence and prints
 * them as one markdown table (docs/benchmarks.md). Formatting helpers for the rows.
 */
import { cpus, loadavg } from 'node:os';
import type { ServerUrls } from './http-load';

/** One line of the table. */
export interface BenchRow {
  /** What was measured, e.g. `SegmentService.getSync(tag)`. */
  readonly measurement: string;
  /** The figure, formatted with its unit. */
  readonly figure: string;
  /** The same-run baseline it is compared with, formatted; `—` when there is none. */
  readonly baseline: string;
  /** figure ÷ baseline (or another comparison), formatted; `—` when there is none. */
  readonly ratio: string;
  /** The target, formatted; `—` when there is none. */
  readonly target: string;
  /** Whether the target was met; `null` without a target. */
  readonly met: boolean | null;
}

/** Settings of one run of the benchmarks, from the environment and the command line. */
export interface BenchOptions {
  /** `--quick` or `BENCH_QUICK=1`: the shortest setting of every module (a smoke run). */
  readonly quick: boolean;
  /** Seconds of each timed run (`BENCH_SECONDS`, default 5; 1 when quick). */
  readonly seconds: number;
  /** Connections of the HTTP throughput runs (`BENCH_CONNECTIONS`, default 50). */
  readonly connections: number;
  /** Requests (or calls) per second of the fixed-rate runs (`BENCH_RATE`, default 2000). */
  readonly rate: number;
  /**
   * Paired throughput rounds of each HTTP comparison (`BENCH_ROUNDS`, default 36; 1 when
   * quick): the 95 % confidence interval of the median of the per-round ratios narrows with
   * their number (docs/benchmarks.md, *What each row measures*).
   */
  readonly rounds: number;
  /**
   * Seconds each server is loaded in one such round (`BENCH_ROUND_SECONDS`, default 1): short,
   * so that the two servers of a pair run within seconds of each other and a change in the
   * host's speed, which lasts longer, moves both alike.
   */
  readonly roundSeconds: number;
  /** `BENCH_SKIP_HTTP=1`: leave out every HTTP measurement. */
  readonly skipHttp: boolean;
}

/** What a module gets: the options, a log, and the shared HTTP servers. */
export interface BenchContext extends BenchOptions {
  /** A detail line (stderr, so stdout holds only the table). */
  log(line: string): void;
  /**
   * The HTTP servers' base URLs — the bare Nest + Fastify one, the application with every
   * default, and with the access log off — started on first use and shared by the modules.
   */
  servers(): Promise<ServerUrls>;
}

/** One benchmark: a name for `--only`, a title for the table, and the run itself. */
export interface BenchModule {
  /** Short name, e.g. `segment` (the file is `bench/<name>.bench.ts`). */
  readonly name: string;
  /** Heading of its rows in the table. */
  readonly title: string;
  /** Runs the benchmark and returns its rows. */
  run(context: BenchContext): Promise<BenchRow[]>;
}

/** Formats a number with thousands separators. */
export function fmt(value: number, digits = 0): string {
  return value.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
}

/** A rate, in millions from a million up: `66.10 M`, `14,252`. */
export function fmtRate(value: number): string {
  return value >= 1e6 ? `${fmt(value / 1e6, 2)} M` : fmt(value);
}

/** Milliseconds: two decimals, three below 0.1 ms. */
export function ms(value: number): string {
  return `${value.toFixed(value < 0.1 ? 3 : 2)} ms`;
}

/** Median of a list. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * The median of `values` and a distribution-free confidence interval of it: the narrowest
 * pair of order statistics [x(k), x(n+1−k)] (1-based, sorted) whose coverage,
 * 1 − 2·P(Binomial(n, ½) < k), is at least `confidence`. It assumes nothing about the shape
 * of the distribution (rounds on a shared machine have long tails), only that the values are
 * independent draws. `low`/`high` are null when `n` is too small for that confidence (fewer
 * than 6 values for 95 %). `min`/`max` are the extremes.
 */
export function medianInterval(
  values: number[],
  confidence = 0.95,
): {
  median: number;
  low: number | null;
  high: number | null;
  coverage: number | null;
  min: number;
  max: number;
} {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  // P(X ≤ j) for X ~ Binomial(n, ½), accumulated term by term: C(n, j) / 2^n.
  let term = 0.5 ** n;
  let below = 0;
  let k = 0;
  let coverage: number | null = null;
  for (let j = 0; 2 * (j + 1) <= n; j++) {
    below += term; // P(X ≤ j) = P(X < j + 1)
    const candidate = 1 - 2 * below;
    if (candidate < confidence) break;
    k = j + 1;
    coverage = candidate;
    term = (term * (n - j)) / (j + 1);
  }
  return {
    median: median(sorted),
    low: k > 0 ? sorted[k - 1] : null,
    high: k > 0 ? sorted[n - k] : null,
    coverage,
    min: sorted[0],
    max: sorted[n - 1],
  };
}

/** A row without a baseline or a target. */
export function plainRow(measurement: string, figure: string): BenchRow {
  return { measurement, figure, baseline: '—', ratio: '—', target: '—', met: null };
}

/**
 * A row comparing `value` with `baseline` as a percentage. `min` is the lowest acceptable
 * ratio (0.9 = at least 90 % of the baseline); without it the row has no target.
 */
export function percentRow(options: {
  measurement: string;
  value: number;
  figure: string;
  baselineValue: number;
  baseline: string;
  min?: number;
}): BenchRow {
  const ratio = options.value / options.baselineValue;
  const hasTarget = options.min !== undefined;
  return {
    measurement: options.measurement,
    figure: options.figure,
    baseline: options.baseline,
    ratio: `**${(ratio * 100).toFixed(1)} %**`,
    target: hasTarget ? `≥ ${(options.min! * 100).toFixed(0)} %` : '—',
    met: hasTarget ? ratio >= options.min! : null,
  };
}

/** A row that failed to run: the error in place of the figure. */
export function failedRow(measurement: string, error: unknown): BenchRow {
  const message = error instanceof Error ? error.message : String(error);
  return {
    measurement,
    figure: `FAILED: ${message.split('\n')[0].slice(0, 160)}`,
    baseline: '—',
    ratio: '—',
    target: '—',
    met: false,
  };
}

/** Options from the environment and `argv` (`--quick`). */
export function benchOptions(argv: string[] = process.argv.slice(2)): BenchOptions {
  const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1';
  const number = (name: string, fallback: number): number => {
    const value = Number(process.env[name]);
    return Number.isFinite(value) && value > 0 ? value : fallback;
  };
  return {
    quick,
    seconds: number('BENCH_SECONDS', quick ? 1 : 5),
    connections: number('BENCH_CONNECTIONS', 50),
    rate: number('BENCH_RATE', 2000),
    rounds: quick ? 1 : Math.round(number('BENCH_ROUNDS', 36)),
    roundSeconds: number('BENCH_ROUND_SECONDS', 1),
    skipHttp: process.env.BENCH_SKIP_HTTP === '1',
  };
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** The table, in markdown. */
export function markdownTable(sections: { module: BenchModule; rows: BenchRow[] }[]): string {
  const lines = [
    '| benchmark | measurement | figure | baseline (same run) | ratio | target | met |',
    '|---|---|---:|---:|---:|---|:-:|',
  ];
  for (const { module, rows } of sections) {
    rows.forEach((row, index) => {
      const met = row.met === null ? '—' : row.met ? '✓' : '✗';
      lines.push(
        `| ${index === 0 ? cell(module.title) : ''} | ${cell(row.measurement)} | ${cell(row.figure)} | ` +
          `${cell(row.baseline)} | ${cell(row.ratio)} | ${cell(row.target)} | ${met} |`,
      );
    });
  }
  return lines.join('\n');
}

/**
 * The machine, the settings and the load, one line, printed above the table. The load
 * average (1 min) at the start and the end of the run tells whether other work shared the
 * cores: on 2 cores, anything much above 1-2 besides the benchmark itself moves the figures.
 */
export function machineLine(settings: BenchOptions, loadAtStart: number): string {
  // cpus(), not availableParallelism(): the latter counts only the cores this process is
  // allowed on, which the HTTP runs restrict while they load the servers.
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return (
    `Node ${process.version}, ${cpus().length} cores (${cpu}), ${new Date().toISOString()}; ` +
    `load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end; ` +
    `${settings.quick ? 'quick, ' : ''}BENCH_SECONDS=${settings.seconds}, BENCH_CONNECTIONS=${settings.connections}, ` +
    `BENCH_RATE=${settings.rate}, BENCH_ROUNDS=${settings.rounds}, ` +
    `BENCH_ROUND_SECONDS=${settings.roundSeconds}${settings.skipHttp ? ', BENCH_SKIP_HTTP=1' : ''}`
  );
}
