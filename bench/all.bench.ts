/**
 * Every benchmark in sequence, one table (`npm run bench`; docs/benchmarks.md). Each entry
 * of {@link BENCH_MODULES} names `bench/<name>.bench.ts`, which exports `bench` (a
 * {@link BenchModule}) and also runs alone through its own `npm run bench:*` script: adding a
 * benchmark to the table is adding its name here.
 *
 *   npm run bench                      # about 5 minutes on 2 cores
 *   npm run bench -- --quick           # the shortest setting of everything (a smoke run)
 *   npm run bench -- --only segment,segment-outage
 *
 * Options (environment): `BENCH_SECONDS` (5), `BENCH_CONNECTIONS` (50), `BENCH_RATE` (2000),
 * `BENCH_SKIP_HTTP=1`, `BENCH_QUICK=1`; see each module for its own. The table goes to
 * stdout, the details of each run to stderr.
 */
import { runBenchmarks, type BenchModule } from './support/report';

/** The modules of the table, in the order they run. */
export const BENCH_MODULES = [
  'segment',
  'snowflake',
  'segment-switch',
  'segment-outage',
  'segment-restarts',
] as const;

function isBenchModule(value: unknown): value is BenchModule {
  const candidate = value as Partial<BenchModule> | undefined;
  return typeof candidate?.name === 'string' && typeof candidate.run === 'function';
}

/** Loads `bench/<name>.bench.ts` and returns its `bench` export. */
async function loadModule(name: string): Promise<BenchModule> {
  const loaded = (await import(`./${name}.bench`)) as { bench?: unknown };
  if (!isBenchModule(loaded.bench)) throw new Error(`bench/${name}.bench.ts exports no bench`);
  return loaded.bench;
}

async function main(argv: string[]): Promise<void> {
  const onlyAt = argv.indexOf('--only');
  const only = onlyAt >= 0 ? (argv[onlyAt + 1] ?? '').split(',').map((n) => n.trim()) : null;
  const unknown = (only ?? []).filter(
    (name) => !(BENCH_MODULES as readonly string[]).includes(name),
  );
  if (unknown.length > 0) {
    throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${BENCH_MODULES.join(', ')}`);
  }
  const names = BENCH_MODULES.filter((name) => only === null || only.includes(name));
  const modules = await Promise.all(names.map(loadModule));
  await runBenchmarks(modules);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
