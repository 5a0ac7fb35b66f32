/**
 * Cost of the ID journal (`npm run bench:journal`): p50/p99 of one range load
 * (`allocate`, one transaction) without a journal entry and with one (one more `INSERT` in the
 * same transaction), on MariaDB and on PostgreSQL, in the same run. The two alternate call by
 * call on their own tags, so machine load drifts over both alike. Paid once per range, never
 * per ID. Against the shared test servers (`LEAF_TEST_MYSQL_URL`, `LEAF_TEST_POSTGRES_URL`), on
 * private databases. Options: `BENCH_SECONDS` (allocations = 100 × seconds per case, at least
 * 200), `--quick`.
 */
import type { DataSource } from 'typeorm';
import { MysqlLeafAllocStore, PostgresLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import type { LeafAllocStore } from 'nestjs-leaf';
import { createPostgresTestDatabase } from '../test/support/postgres-database';
import { fmt, ms, type BenchModule, type BenchRow } from './support/report';
import { runAlone } from './support/run';
import { withBenchDatabase } from './support/segment-module';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const sortedOf = (samples: number[]) => [...samples].sort((a, b) => a - b);
const cell = (samples: number[]): string => {
  const sorted = sortedOf(samples);
  return `p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}`;
};

const ENTRY = { mode: 'segment', instance: 'bench-instance:8080', term: null } as const;

/** `count` alternating loads of `plain` (no entry) and `journal` (an entry), after a warm-up. */
async function compare(store: LeafAllocStore, count: number) {
  const timed = async (tag: string, journal: boolean): Promise<number> => {
    const started = performance.now();
    await (journal ? store.allocate(tag, undefined, undefined, ENTRY) : store.allocate(tag));
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i++) {
    await timed('plain', false);
    await timed('journal', true);
  }
  const without: number[] = [];
  const withJournal: number[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      without.push(await timed('plain', false));
      withJournal.push(await timed('journal', true));
    } else {
      withJournal.push(await timed('journal', true));
      without.push(await timed('plain', false));
    }
  }
  return { without, withJournal };
}

function row(database: string, count: number, r: Awaited<ReturnType<typeof compare>>): BenchRow {
  const p50 = (s: number[]) => percentile(sortedOf(s), 50);
  return {
    measurement: `${database}: one range load (\`allocate\`), ${fmt(count)} per case, alternating, sequential`,
    figure: `with the journal row: ${cell(r.withJournal)}`,
    baseline: `without: ${cell(r.without)}`,
    ratio: `p50 +${ms(p50(r.withJournal) - p50(r.without))}`,
    target: 'paid once per range, never per ID',
    met: true,
  };
}

/** p50/p99 of a range load without and with its journal row. */
export const bench: BenchModule = {
  name: 'id-journal',
  title: 'ID journal: range load latency without and with the journal row (MariaDB, PostgreSQL)',
  async run(context) {
    const count = context.quick ? 50 : Math.max(200, 100 * context.seconds);
    const rows: BenchRow[] = [];
    rows.push(
      await withBenchDatabase({ plain: 1000, journal: 1000 }, async (_db, dataSource) => {
        const result = await compare(new MysqlLeafAllocStore(dataSource), count);
        context.log(`MariaDB without: ${cell(result.without)}; with: ${cell(result.withJournal)}`);
        return row('MariaDB', count, result);
      }),
    );
    const pg = await createPostgresTestDatabase({ migrate: true });
    let dataSource: DataSource | null = null;
    try {
      await pg.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('plain', 1, 1000)");
      await pg.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('journal', 1, 1000)");
      dataSource = await pg.openDataSource();
      const result = await compare(new PostgresLeafAllocStore(dataSource), count);
      context.log(`PostgreSQL without: ${cell(result.without)}; with: ${cell(result.withJournal)}`);
      rows.push(row('PostgreSQL', count, result));
    } finally {
      await dataSource?.destroy();
      await pg.drop();
    }
    return rows;
  },
};

if (require.main === module) runAlone(bench);
