/**
 * Every benchmark in sequence, one table (`npm run bench`; docs/benchmarks.md). Each entry
 * of {@link BENCH_MODULES} names `bench/<name>.bench.ts`, which exports `bench` (a
 * {@link BenchModule}) and also runs alone through its own `npm run bench:*` script: adding a
 * benchmark to the table is adding its name here.
 *
 *   npm run bench                      # 6-8 minutes on 2 cores
 *   npm run bench -- --quick           # the shortest setting of everything (a smoke run)
 *   npm run bench -- --only segment,segment-outage
 *   npm run bench -- --with snowflake-availability   # adds the optional modules named
 *
 * Options (environment): `BENCH_SECONDS` (5), `BENCH_CONNECTIONS` (50), `BENCH_RATE` (2000),
 * `BENCH_ROUNDS` (36), `BENCH_ROUND_SECONDS` (1), `BENCH_SKIP_HTTP=1`, `BENCH_QUICK=1`; see
 * each module for its own. The table goes to stdout, the details of each run to stderr.
 */
import type { BenchModule } from './support/report';
import { runBenchmarks } from './support/run';

/** The modules of the table, in the order they run. */
export const BENCH_MODULES = [
  'segment',
  'snowflake',
  'segment-switch',
  'segment-outage',
  'segment-restarts',
  'segment-high-water',
  'segment-postgres',
  'snowflake-startup',
  'client',
  'otel',
  'orm-insert',
  'orm-drizzle',
  'orm-mikro-orm',
  'orm-prisma',
  'formats',
  'business-numbers',
  'gapless',
  'client-tokens',
  'peer-auth',
] as const;

/**
 * Modules left out unless named with `--with` or `--only`: the snowflake availability
 * scenarios wait out ZooKeeper session timeouts and a 60 s runway (minutes, dominated by the
 * timeouts being measured), which would double the run. `sequence` starts three more
 * application processes on MariaDB and ZooKeeper.
 */
export const OPTIONAL_BENCH_MODULES = ['snowflake-availability', 'sequence'] as const;

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

/** The names after `flag` (`--only a,b`), or null without the flag. */
function namesAfter(argv: string[], flag: string): string[] | null {
  const at = argv.indexOf(flag);
  return at < 0 ? null : (argv[at + 1] ?? '').split(',').map((name) => name.trim());
}

async function main(argv: string[]): Promise<void> {
  const known: readonly string[] = [...BENCH_MODULES, ...OPTIONAL_BENCH_MODULES];
  const only = namesAfter(argv, '--only');
  const extra = namesAfter(argv, '--with') ?? [];
  const unknown = [...(only ?? []), ...extra].filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${known.join(', ')}`);
  }
  const names = known.filter((name) =>
    only !== null
      ? only.includes(name)
      : (BENCH_MODULES as readonly string[]).includes(name) || extra.includes(name),
  );
  const modules = await Promise.all(names.map(loadModule));
  await runBenchmarks(modules);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
