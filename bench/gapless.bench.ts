/**
 * Gapless reservations per second on one series, PostgreSQL (fsync as the server has it),
 * against the baseline every ERP uses: a locked counter row plus the document's insert in one
 * transaction per number (docs/gapless.md, "Design").
 *
 *   npx ts-node -r tsconfig-paths/register -T bench/gapless.bench.ts
 *
 * Options (environment): `BENCH_SECONDS` (5), `BENCH_CLIENTS` (32),
 * `LEAF_TEST_POSTGRES_URL` (postgres://postgres@127.0.0.1:5432/test). A database of its own,
 * dropped at the end. Not in `npm run bench`'s table yet.
 */
import 'reflect-metadata';
import { GaplessGroupCommit } from '../libs/leaf/src/core/gapless/gapless-group-commit';
import { checkNewGaplessSeries } from '../libs/leaf/src/core/gapless/gapless-series';
import { TypeormGaplessStore } from '../libs/leaf/src/adapters/typeorm/typeorm-gapless.store';
import { createPostgresTestDatabase } from '../test/support/postgres-database';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);

/** Runs `once` from `clients` loops for the duration; answers per second and p99 ms. */
async function measure(clients: number, once: (client: number, i: number) => Promise<void>) {
  const end = Date.now() + SECONDS * 1000;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; Date.now() < end; i++) {
        const started = performance.now();
        await once(client, i);
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    perSecond: Math.round(latencies.length / SECONDS),
    p99Ms: Number(latencies[Math.floor(latencies.length * 0.99)]!.toFixed(1)),
  };
}

async function main(): Promise<void> {
  const db = await createPostgresTestDatabase({ migrate: true });
  const dataSource = await db.openDataSource({ overrides: { poolSize: CLIENTS + 2 } as never });
  try {
    const store = new TypeormGaplessStore(dataSource, 5000);
    await store.createSeries(checkNewGaplessSeries({ name: 'bench', width: 12 }));
    const commit = new GaplessGroupCommit(store, 500);
    const reserved = await measure(CLIENTS, async (client, i) => {
      await commit.submit('bench', { kind: 'reserve', key: `c${client}-${i}`, ttlMs: 600_000 });
    });

    await dataSource.query(
      'CREATE TABLE bench_counter (name text PRIMARY KEY, last bigint NOT NULL)',
    );
    await dataSource.query("INSERT INTO bench_counter VALUES ('bench', 0)");
    await dataSource.query(
      'CREATE TABLE bench_invoice (number bigint PRIMARY KEY, body text NOT NULL)',
    );
    const locked = await measure(CLIENTS, async () => {
      await dataSource.transaction('READ COMMITTED', async (manager) => {
        const [row] = (await manager.query(
          "SELECT last FROM bench_counter WHERE name = 'bench' FOR UPDATE",
        )) as Array<{ last: string }>;
        const next = BigInt(row!.last) + 1n;
        await manager.query("UPDATE bench_counter SET last = $1 WHERE name = 'bench'", [next]);
        await manager.query('INSERT INTO bench_invoice VALUES ($1, $2)', [next, 'invoice']);
      });
    });
    const [{ fsync }] = (await dataSource.query('SHOW fsync')) as Array<{ fsync: string }>;
    console.log(
      JSON.stringify(
        {
          clients: CLIENTS,
          seconds: SECONDS,
          fsync,
          gaplessReserve: reserved,
          lockedRowPlusInsert: locked,
        },
        null,
        2,
      ),
    );
  } finally {
    await dataSource.destroy();
    await db.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
