/**
 * Gapless numbers (`npm run bench:gapless`; a module of `npm run bench`): confirmed numbers
 * per second on one series on PostgreSQL (fsync as the server has it) — each caller reserves
 * a number under its key and confirms it, through the group commit of service mode — against
 * the baseline every ERP uses in the same run: a locked counter row plus the document's insert
 * in one transaction per number (docs/gapless.md, "Design"). 1, 8 and 32 callers; the goal
 * at 32 is ≥ 10,000 confirmed numbers/s with reserve p99 ≤ 5 ms.
 *
 * The details (stderr) give each run's transactions, mean batch size and statements per
 * transaction, counted on the store's connections, and a profile of one transaction: the ms
 * of each kind of statement (round trip and execution; the commit's includes its fsync) and
 * the rest (JS, pool).
 *
 * Options: `BENCH_SECONDS` (5; 1 with `--quick`), `LEAF_TEST_POSTGRES_URL`
 * (postgres://postgres@127.0.0.1:5432/test). A database of its own, dropped at the end.
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { GaplessGroupCommit } from '../libs/leaf/src/core/gapless/gapless-group-commit';
import { checkNewGaplessSeries } from '../libs/leaf/src/core/gapless/gapless-series';
import type { GaplessStore } from '../libs/leaf/src/core/gapless/gapless-store.port';
import { TypeormGaplessStore } from '../libs/leaf/src/adapters/typeorm/typeorm-gapless.store';
import { createPostgresTestDatabase } from '../test/support/postgres-database';
import { fmt, type BenchContext, type BenchModule, type BenchRow } from './support/report';
import { runAlone } from './support/run';

const CLIENTS = [1, 8, 32] as const;
const GOAL_PER_SECOND = 10_000;
const GOAL_P99_MS = 5;

/** Calls per second and the p99 of `latencies` (ms) over `seconds`. */
interface Rate {
  readonly perSecond: number;
  readonly p99Ms: number;
}

/** Runs `once` from `clients` loops for `seconds`; each loop's call `i` is its own. */
async function measure(
  clients: number,
  seconds: number,
  once: (client: number, i: number, latencies: number[]) => Promise<void>,
): Promise<Rate> {
  const end = Date.now() + seconds * 1000;
  const latencies: number[] = [];
  let done = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; Date.now() < end; i++) {
        await once(client, i, latencies);
        done++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    perSecond: done / seconds,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? Number.NaN,
  };
}

/** What a statement of a group commit does, for the profile (by its text). */
function kindOf(sql: string): string {
  if (/^(BEGIN|START|SET)/i.test(sql)) return 'begin';
  if (/^(COMMIT|ROLLBACK)|; COMMIT$/i.test(sql)) return 'commit'; // with a kept write
  if (/^SELECT\b[\s\S]*FROM leaf_gapless_series\b/i.test(sql)) return 'lock';
  if (/^SELECT/i.test(sql)) return 'read';
  return 'write';
}

/**
 * A store that counts its transactions and the statements its connections ran, and profiles
 * where a transaction's milliseconds go: each kind of statement (round trip and execution,
 * fsync in `commit`), and the rest of the transaction (the JS, the pool).
 */
function counted(store: GaplessStore, dataSource: DataSource) {
  const counts = { transactions: 0, statements: 0, transactionMs: 0 };
  const ms = new Map<string, number>();
  const create = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (...args: Parameters<DataSource['createQueryRunner']>) => {
    const runner = create(...args);
    const query = runner.query.bind(runner);
    runner.query = (async (...rest: Parameters<typeof query>) => {
      counts.statements++;
      const started = performance.now();
      try {
        return await query(...rest);
      } finally {
        const kind = kindOf(rest[0]);
        ms.set(kind, (ms.get(kind) ?? 0) + performance.now() - started);
      }
    }) as typeof query;
    return runner;
  };
  const wrapped: GaplessStore = Object.assign(Object.create(store) as GaplessStore, {
    withLock: (async (series, work) => {
      counts.transactions++;
      const started = performance.now();
      try {
        return await store.withLock(series, work);
      } finally {
        counts.transactionMs += performance.now() - started;
      }
    }) as GaplessStore['withLock'],
  });
  /** ms per transaction since `before` (a copy of `counts` and of the kinds' sums). */
  const profile = (before: { counts: typeof counts; ms: Map<string, number> }) => {
    const n = counts.transactions - before.counts.transactions;
    const per = (total: number) => (total / n).toFixed(2);
    let statements = 0;
    const parts = ['begin', 'lock', 'read', 'write', 'commit'].map((kind) => {
      const spent = (ms.get(kind) ?? 0) - (before.ms.get(kind) ?? 0);
      statements += spent;
      return `${kind} ${per(spent)}`;
    });
    const whole = counts.transactionMs - before.counts.transactionMs;
    return `ms per transaction: ${per(whole)} = ${parts.join(' + ')} + rest ${per(whole - statements)}`;
  };
  const mark = () => ({ counts: { ...counts }, ms: new Map(ms) });
  return { store: wrapped, counts, profile, mark };
}

async function run(context: BenchContext): Promise<BenchRow[]> {
  const seconds = context.seconds;
  const db = await createPostgresTestDatabase({ migrate: true });
  const dataSource = await db.openDataSource({ overrides: { poolSize: 40 } as never });
  const rows: BenchRow[] = [];
  try {
    const [{ fsync }] = (await dataSource.query('SHOW fsync')) as Array<{ fsync: string }>;
    await dataSource.query(
      'CREATE TABLE bench_counter (name text PRIMARY KEY, last bigint NOT NULL)',
    );
    await dataSource.query("INSERT INTO bench_counter VALUES ('bench', 0)");
    await dataSource.query(
      'CREATE TABLE bench_invoice (number bigint PRIMARY KEY, body text NOT NULL)',
    );
    const base = new TypeormGaplessStore(dataSource, 5000);
    const { store, counts, profile, mark } = counted(base, dataSource);
    for (const clients of CLIENTS) {
      const series = `bench-${clients}`;
      await base.createSeries(checkNewGaplessSeries({ name: series, width: 12 }));
      const commit = new GaplessGroupCommit(store, 500);
      const before = { ...counts };
      const marked = mark();
      const gapless = await measure(clients, seconds, async (client, i, latencies) => {
        const key = `c${client}-${i}`;
        const started = performance.now();
        const reserved = await commit.submit(series, { kind: 'reserve', key, ttlMs: 600_000 });
        latencies.push(performance.now() - started);
        const number = (reserved as { number: bigint }).number;
        await commit.submit(series, { kind: 'confirm', key, number });
      });
      const transactions = counts.transactions - before.transactions;
      const numbers = gapless.perSecond * seconds;
      context.log(
        `gapless, ${clients} callers: ${fmt(gapless.perSecond)} confirmed/s, reserve p99 ${gapless.p99Ms.toFixed(1)} ms; ` +
          `${fmt(transactions)} transactions, ${fmt((2 * numbers) / transactions, 1)} requests each, ` +
          `${fmt((counts.statements - before.statements) / transactions, 1)} statements each (fsync ${fsync}); ` +
          profile(marked),
      );
      const locked = await measure(clients, seconds, async (_client, _i, latencies) => {
        const started = performance.now();
        await dataSource.transaction('READ COMMITTED', async (manager) => {
          const [row] = (await manager.query(
            "SELECT last FROM bench_counter WHERE name = 'bench' FOR UPDATE",
          )) as Array<{ last: string }>;
          const next = BigInt(row!.last) + 1n;
          await manager.query("UPDATE bench_counter SET last = $1 WHERE name = 'bench'", [next]);
          await manager.query('INSERT INTO bench_invoice VALUES ($1, $2)', [next, 'invoice']);
        });
        latencies.push(performance.now() - started);
      });
      context.log(
        `locked row + insert, ${clients} callers: ${fmt(locked.perSecond)}/s, p99 ${locked.p99Ms.toFixed(1)} ms`,
      );
      const goal = clients === 32;
      const met = gapless.perSecond >= GOAL_PER_SECOND && gapless.p99Ms <= GOAL_P99_MS;
      rows.push({
        measurement: `gapless confirmed numbers/s, one series, ${clients} caller${clients > 1 ? 's' : ''} (reserve + confirm, group commit, PostgreSQL, fsync ${fsync})`,
        figure: `${fmt(gapless.perSecond)}/s, reserve p99 ${gapless.p99Ms.toFixed(1)} ms`,
        baseline: `locked counter row + insert ${fmt(locked.perSecond)}/s, p99 ${locked.p99Ms.toFixed(1)} ms`,
        ratio: `**${(gapless.perSecond / locked.perSecond).toFixed(1)}×**`,
        target: goal ? `≥ ${fmt(GOAL_PER_SECOND)}/s, p99 ≤ ${GOAL_P99_MS} ms` : '—',
        met: goal ? met : null,
      });
    }
    return rows;
  } finally {
    await dataSource.destroy();
    await db.drop();
  }
}

/** Gapless confirmed numbers against the locked counter row, at 1 / 8 / 32 callers. */
export const bench: BenchModule = {
  name: 'gapless',
  title: 'Gapless numbers',
  run,
};

if (require.main === module) runAlone(bench);
