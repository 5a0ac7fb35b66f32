/**
 * IDs skipped across rolling restarts (`npm run bench:restarts`), with and without the
 * hand-back of unused IDs at a graceful stop (Leaf issues #15, #78).
 *
 * On a throw-away MariaDB database (`LEAF_TEST_MYSQL_URL`, default
 * `mysql://root@127.0.0.1:3306/leaf`): one tag (step 1000, Leaf's dynamic step on), an
 * in-process LeafModule on the real MySQL store, restarted 10 times (graceful close, then a
 * new instance) under light load (a few hundred IDs per run, one every 2 ms). Skipped IDs =
 * growth of `max_id` − IDs issued: what the table gave away that nobody received.
 *
 * Options (environment): BENCH_RESTARTS (10), BENCH_IDS_PER_RUN (300), BENCH_STEP (1000).
 */
import 'reflect-metadata';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { LeafModule, MysqlLeafAllocStore, SegmentService } from 'nestjs-leaf';
import { createTestDatabase } from '../test/support/test-database';

const RESTARTS = Number(process.env.BENCH_RESTARTS ?? 10);
const IDS_PER_RUN = Number(process.env.BENCH_IDS_PER_RUN ?? 300);
const STEP = Number(process.env.BENCH_STEP ?? 1000);

async function measure(handBackOnClose: boolean): Promise<{ issued: number; growth: bigint }> {
  const db = await createTestDatabase();
  try {
    const migrator = await db.openDataSource({ migrate: true });
    await migrator.destroy();
    await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, ?)', [
      'restarts',
      STEP,
    ]);
    const dataSource = await db.openDataSource();
    const seen = new Set<bigint>();
    try {
      for (let run = 0; run < RESTARTS; run++) {
        const moduleRef = await Test.createTestingModule({
          imports: [
            ScheduleModule.forRoot(),
            LeafModule.forRoot({
              segment: { store: new MysqlLeafAllocStore(dataSource), handBackOnClose },
              snowflake: false,
            }),
          ],
        }).compile();
        moduleRef.useLogger(false);
        const app = await moduleRef.init();
        const segments = app.get(SegmentService);
        for (let i = 0; i < IDS_PER_RUN; i++) {
          const id = await segments.get('restarts');
          if (seen.has(id)) throw new Error(`ID ${id} issued twice`);
          seen.add(id);
          if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await app.close();
      }
    } finally {
      await dataSource.destroy();
    }
    const maxId = BigInt((await db.maxId('restarts')) ?? '1');
    return { issued: seen.size, growth: maxId - 1n };
  } finally {
    await db.drop();
  }
}

async function main(): Promise<void> {
  console.log(
    `${RESTARTS} graceful restarts, ${IDS_PER_RUN} IDs per run, step ${STEP}, MariaDB (node ${process.version})`,
  );
  for (const handBack of [false, true]) {
    const { issued, growth } = await measure(handBack);
    const skipped = growth - BigInt(issued);
    console.log(
      `${handBack ? 'with hand-back   ' : 'without hand-back'}  IDs issued ${issued}, max_id growth ${growth}, ` +
        `skipped ${skipped} (${(Number(skipped) / RESTARTS).toFixed(1)} per restart)`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
