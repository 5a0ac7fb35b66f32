/**
 * Segment mode on PostgreSQL against MariaDB, in the same run (`npm run bench:postgres`; a
 * module of `npm run bench`). Every comparison alternates the two databases round by round,
 * so the machine's drift moves both alike; the figure is PostgreSQL's, the baseline
 * MariaDB's, the ratio the median of the per-round ratios with its 95 % interval.
 *
 * 1. `SegmentService.getSync(tag)` in this process, `LeafModule` on each database (step
 *    1,000,000: the range loads of the run fall inside the timed chunks, as in a server).
 * 2. HTTP `GET /api/segment/get/{key}`: the built application on each (every default but
 *    `LEAF_DB_URL`), paired throughput rounds (`BENCH_ROUNDS` × `BENCH_ROUND_SECONDS`).
 * 3. One range load (`createLeafAllocStore(dataSource).allocate`, one transaction) on each,
 *    alternating call by call: p50/p99.
 *
 * Against the shared MariaDB (`LEAF_TEST_MYSQL_URL`) and PostgreSQL (`LEAF_TEST_POSTGRES_URL`),
 * each on a private database dropped afterwards. Options: bench/support/report.ts, `--quick`.
 */
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import type { SegmentService } from 'nestjs-leaf';
import { SegmentNotReadyError } from 'nestjs-leaf/errors';
import { createLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { createPostgresTestDatabase } from '../test/support/postgres-database';
import type { ServerTestDatabase } from '../test/support/server-databases';
import { createTestDatabase } from '../test/support/test-database';
import {
  load,
  pinLoadGenerator,
  pinnedServerCpu,
  ratioCell,
  whilePinned,
} from './support/http-load';
import { ensureBuilt, LeafServer } from './support/leaf-server';
import {
  fmt,
  fmtRate,
  median,
  ms,
  type BenchContext,
  type BenchModule,
  type BenchRow,
} from './support/report';
import { runAlone } from './support/run';
import { openSegmentModule } from './support/segment-module';

/** The two databases of a run: PostgreSQL first (the figure), MariaDB (the baseline). */
interface Databases {
  readonly postgres: ServerTestDatabase;
  readonly mariadb: ServerTestDatabase;
  readonly sources: { readonly postgres: DataSource; readonly mariadb: DataSource };
}

const STEP = 1_000_000;
/** Calls per chunk (the event loop runs between chunks, so range loads complete) and chunks per round. */
const CHUNK = 100_000;
const CHUNKS = 20;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** `p50 …, p99 …` of latency samples in ms. */
function latencyCell(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}`;
}

const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Up to `n` calls of `getSync(tag)`; stops early when no range is in memory (the next one
 * still loading). Returns the calls made. A function of its own: one loop, one call site.
 */
function syncChunk(
  segments: SegmentService,
  tag: string,
  n: number,
  out: { sink: bigint },
): number {
  let i = 0;
  try {
    for (; i < n; i++) out.sink ^= segments.getSync(tag);
  } catch (error) {
    if (!(error instanceof SegmentNotReadyError)) throw error;
  }
  return i;
}

/**
 * Calls per second of `getSync(tag)` over one round of CHUNKS × CHUNK calls. When the buffer
 * runs dry (the database slower than the calls), the wait for the next range (`get`) is
 * timed too and counted in `stalls`.
 */
async function getSyncRate(
  segments: SegmentService,
  tag: string,
  stalls: { count: number } = { count: 0 },
): Promise<number> {
  const out = { sink: 0n };
  const total = CHUNK * CHUNKS;
  let elapsed = 0;
  for (let calls = 0; calls < total;) {
    const start = performance.now();
    const made = syncChunk(segments, tag, Math.min(CHUNK, total - calls), out);
    calls += made;
    if (made < CHUNK && calls < total) {
      out.sink ^= await segments.get(tag);
      calls += 1;
      stalls.count += 1;
    }
    elapsed += performance.now() - start;
    await yieldToLoop();
  }
  if (out.sink < 0n) console.log(out.sink); // keeps the loop from being optimised away
  return total / (elapsed / 1000);
}

/** Row 1: the hot path on each database, interleaved rounds. */
async function inProcess(context: BenchContext, dbs: Databases): Promise<BenchRow> {
  const rounds = context.quick ? 1 : 9;
  const open = (dataSource: DataSource) =>
    openSegmentModule({ dataSource, warmTags: ['hot'], maxStep: STEP });
  const pg = await open(dbs.sources.postgres);
  const my = await open(dbs.sources.mariadb);
  try {
    const rates = { postgres: [] as number[], mariadb: [] as number[] };
    const stalls = { postgres: { count: 0 }, mariadb: { count: 0 } };
    await getSyncRate(pg.segments, 'hot');
    await getSyncRate(my.segments, 'hot');
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const first = round % 2 === 0;
      const a = first ? await getSyncRate(pg.segments, 'hot', stalls.postgres) : 0;
      const b = await getSyncRate(my.segments, 'hot', stalls.mariadb);
      const p = first ? a : await getSyncRate(pg.segments, 'hot', stalls.postgres);
      rates.postgres.push(p);
      rates.mariadb.push(b);
      ratios.push(p / b);
    }
    context.log(
      `getSync: ${rounds} rounds of ${fmt(CHUNK * CHUNKS)} calls; PostgreSQL ${fmt(median(rates.postgres))}, MariaDB ${fmt(median(rates.mariadb))} calls/s; ` +
        `waits for a range (buffer dry): PostgreSQL ${stalls.postgres.count}, MariaDB ${stalls.mariadb.count}`,
    );
    return {
      measurement: '`SegmentService.getSync(tag)`, step 1,000,000 (range loads included)',
      figure: `${fmtRate(median(rates.postgres))} IDs/s`,
      baseline: `MariaDB ${fmtRate(median(rates.mariadb))} IDs/s`,
      ratio: ratioCell(ratios),
      target: '—',
      met: null,
    };
  } finally {
    await pg.close();
    await my.close();
  }
}

/** Row 2: the built application on each database, paired throughput rounds. */
async function http(context: BenchContext, dbs: Databases): Promise<BenchRow> {
  ensureBuilt(context.log);
  context.log(`HTTP runs: ${pinLoadGenerator()}`);
  const env = (url: string) => ({ LEAF_DB_URL: url, LEAF_SNOWFLAKE_ENABLED: 'false' });
  const cpu = { cpu: pinnedServerCpu() };
  const servers = await Promise.all([
    LeafServer.start('PostgreSQL', env(dbs.postgres.url), cpu),
    LeafServer.start('MariaDB', env(dbs.mariadb.url), cpu),
  ]);
  try {
    const [pgUrl, myUrl] = servers.map(
      (server) => `http://127.0.0.1:${server.port}/api/segment/get/leaf-segment-test`,
    );
    const run = async (url: string, seconds: number): Promise<number> => {
      const result = await load(url, { durationSec: seconds, connections: context.connections });
      if (result.errors + result.non2xx > 0) {
        throw new Error(`${url}: ${result.errors + result.non2xx} failed requests`);
      }
      return result.requestsPerSec;
    };
    return await whilePinned(async () => {
      await run(pgUrl!, context.quick ? 1 : 2);
      await run(myUrl!, context.quick ? 1 : 2);
      const rps = { postgres: [] as number[], mariadb: [] as number[] };
      const ratios: number[] = [];
      for (let round = 0; round < context.rounds; round++) {
        const order = round % 2 === 0 ? [pgUrl!, myUrl!] : [myUrl!, pgUrl!];
        const [x, y] = [
          await run(order[0]!, context.roundSeconds),
          await run(order[1]!, context.roundSeconds),
        ];
        const [p, m] = round % 2 === 0 ? [x, y] : [y, x];
        rps.postgres.push(p);
        rps.mariadb.push(m);
        ratios.push(p / m);
      }
      return {
        measurement: `\`GET /api/segment/get/{key}\` throughput, ${context.connections} connections, every default but \`LEAF_DB_URL\``,
        figure: `${fmt(median(rps.postgres))} req/s`,
        baseline: `MariaDB ${fmt(median(rps.mariadb))} req/s`,
        ratio: ratioCell(ratios),
        target: '—',
        met: null,
      };
    });
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** Row 3: one range load on each, alternating call by call. */
async function rangeLoads(context: BenchContext, dbs: Databases): Promise<BenchRow> {
  const count = context.quick ? 50 : Math.max(200, 100 * context.seconds);
  const stores = {
    postgres: createLeafAllocStore(dbs.sources.postgres),
    mariadb: createLeafAllocStore(dbs.sources.mariadb),
  };
  const timed = async (which: 'postgres' | 'mariadb'): Promise<number> => {
    const started = performance.now();
    await stores[which].allocate('alloc');
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i++) await Promise.all([timed('postgres'), timed('mariadb')]);
  const samples = { postgres: [] as number[], mariadb: [] as number[] };
  for (let i = 0; i < count; i++) {
    const order =
      i % 2 === 0 ? (['postgres', 'mariadb'] as const) : (['mariadb', 'postgres'] as const);
    for (const which of order) samples[which].push(await timed(which));
  }
  const p50 = (s: number[]) =>
    percentile(
      [...s].sort((a, b) => a - b),
      50,
    );
  context.log(
    `range loads: PostgreSQL ${latencyCell(samples.postgres)}; MariaDB ${latencyCell(samples.mariadb)}`,
  );
  return {
    measurement: `one range load (\`allocate\`, one transaction), ${fmt(count)} per database, alternating`,
    figure: latencyCell(samples.postgres),
    baseline: `MariaDB ${latencyCell(samples.mariadb)}`,
    ratio: `p50 ×${(p50(samples.postgres) / p50(samples.mariadb)).toFixed(2)}`,
    target: '—',
    met: null,
  };
}

/** Opens a migrated database on each server with the tags of the rows, runs `fn`, drops them. */
async function withDatabases<T>(fn: (dbs: Databases) => Promise<T>): Promise<T> {
  const [postgres, mariadb] = await Promise.all([
    createPostgresTestDatabase({ migrate: true }),
    createTestDatabase({ migrate: true }),
  ]);
  const opened: DataSource[] = [];
  try {
    for (const db of [postgres, mariadb]) {
      await db.query(
        `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('hot', 1, ${STEP}), ('alloc', 1, 1000)`,
      );
    }
    const [pgSource, mySource] = await Promise.all([
      postgres.openDataSource(),
      mariadb.openDataSource(),
    ]);
    opened.push(pgSource, mySource);
    return await fn({ postgres, mariadb, sources: { postgres: pgSource, mariadb: mySource } });
  } finally {
    await Promise.all(opened.map((source) => source.destroy()));
    await Promise.all([postgres.drop(), mariadb.drop()]);
  }
}

/** Segment mode on PostgreSQL against MariaDB. */
export const bench: BenchModule = {
  name: 'segment-postgres',
  title: 'Segment mode on PostgreSQL (baseline: MariaDB, same run)',
  run(context) {
    return withDatabases(async (dbs) => {
      const rows = [await inProcess(context, dbs)];
      if (!context.skipHttp) rows.push(await http(context, dbs));
      rows.push(await rangeLoads(context, dbs));
      return rows;
    });
  },
};

if (require.main === module) runAlone(bench);
