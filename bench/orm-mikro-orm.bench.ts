/**
 * MikroORM inserts with Leaf IDs (`nestjs-leaf/orm/sync`: `onCreate: leafIdDefault(segments,
 * tag)` on a `bigint` key, segment mode in this process) against the database's own identity
 * column, through the same MikroORM 7 in the same run on one PostgreSQL database
 * (`npm run bench:orm-mikro-orm`; a module of `npm run bench`).
 *
 * Two entities of the same shape (`id` bigint primary key, `name` varchar(64)), their tables
 * from MikroORM's schema generator: one keyed by Leaf (`.autoincrement(false)`, tag step
 * 1,000,000, warmed before the first insert), one left to MikroORM's default for a numeric
 * key (`bigserial`). `batchSize` 500, so a batch is one INSERT for both. Paired rounds as in
 * bench/support/orm-rounds.ts: the figure is the median of Leaf's rate ÷ identity's per round
 * with its 95 % interval.
 *
 * 1. Single rows: a forked `EntityManager`, `em.create(Row, { name })`, `await em.flush()`.
 * 2. Batches: a forked `EntityManager`, 500 `em.create`, one `flush()`.
 *
 * Against the shared PostgreSQL (`LEAF_TEST_POSTGRES_URL`), on a private database dropped
 * afterwards. Options: bench/support/report.ts, `--quick`.
 */
import { defineEntity, p, type EntityManager } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import type { SegmentService } from 'nestjs-leaf';
import { leafIdDefault } from 'nestjs-leaf/orm/sync';
import { createPostgresTestDatabase } from '../test/support/postgres-database';
import { BATCH, insertSizes, pairedRounds, pairedRow, rowsPerSecond } from './support/orm-rounds';
import type { BenchModule } from './support/report';
import { runAlone } from './support/run';
import { openSegmentModule } from './support/segment-module';

const TAG = 'bench-mikro-orm';
const sources: { segments?: SegmentService } = {};

const LeafRow = defineEntity({
  name: 'LeafRow',
  tableName: 'bench_leaf_rows',
  properties: {
    id: p
      .bigint()
      .primary()
      .autoincrement(false)
      .onCreate(leafIdDefault(() => sources.segments!, TAG)),
    name: p.string().length(64),
  },
});

const IdentityRow = defineEntity({
  name: 'IdentityRow',
  tableName: 'bench_identity_rows',
  properties: {
    id: p.bigint().primary(),
    name: p.string().length(64),
  },
});

/** MikroORM inserts with Leaf IDs against PostgreSQL's identity. */
export const bench: BenchModule = {
  name: 'orm-mikro-orm',
  title: 'MikroORM inserts with Leaf IDs on PostgreSQL (baseline: identity column, same run)',
  async run(context) {
    const db = await createPostgresTestDatabase({ migrate: true });
    try {
      await db.query(`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ($1, 1, 1000000)`, [
        TAG,
      ]);
      const dataSource = await db.openDataSource();
      const leaf = await openSegmentModule({ dataSource });
      const orm = await MikroORM.init({
        entities: [LeafRow, IdentityRow],
        clientUrl: db.url,
        batchSize: BATCH,
        pool: { min: 1, max: 1 },
      });
      try {
        await orm.schema.create();
        sources.segments = leaf.segments;
        await leaf.segments.get(TAG);
        const { rounds, singles, batches } = insertSizes(context);
        type Create = (em: EntityManager, name: string) => unknown;
        const leafRow: Create = (em, name) => em.create(LeafRow, { name });
        const identityRow: Create = (em, name) => em.create(IdentityRow, { name });
        const one = (create: Create) => () =>
          rowsPerSecond(singles, 1, (i) => {
            const em = orm.em.fork();
            create(em, `r${i}`);
            return em.flush();
          });
        const many = (create: Create) => () =>
          rowsPerSecond(batches, BATCH, (i) => {
            const em = orm.em.fork();
            for (let j = 0; j < BATCH; j++) create(em, `b${i}-${j}`);
            return em.flush();
          });
        const single = await pairedRounds(
          context,
          'single rows',
          rounds,
          one(leafRow),
          one(identityRow),
        );
        const batch = await pairedRounds(
          context,
          `batches of ${BATCH}`,
          rounds,
          many(leafRow),
          many(identityRow),
        );
        return [
          pairedRow(
            'MikroORM `em.create(Row, row)` + `flush()` with a Leaf segment ID (`onCreate`), one row per flush',
            single,
          ),
          pairedRow(
            `MikroORM ${BATCH} \`em.create\` + one \`flush()\` with Leaf segment IDs (\`onCreate\`), ${BATCH} rows per INSERT`,
            batch,
          ),
        ];
      } finally {
        sources.segments = undefined;
        await orm.close();
        await leaf.close();
        await dataSource.destroy();
      }
    } finally {
      await db.drop();
    }
  },
};

if (require.main === module) runAlone(bench);
