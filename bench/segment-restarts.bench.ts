/**
 * IDs skipped across rolling restarts (`npm run bench:restarts`; a module of `npm run
 * bench`), with and without the hand-back of unused IDs at a graceful stop (Leaf issues #15,
 * #78).
 *
 * On a throw-away MariaDB database (`LEAF_TEST_MYSQL_URL`, default
 * `mysql://root@127.0.0.1:3306/leaf`): one tag (step 1000, Leaf's dynamic step on), an
 * in-process LeafModule on the real MySQL store, restarted 10 times (graceful close, then a
 * new instance) under light load (a few hundred IDs per run, one every 2 ms). Skipped IDs =
 * growth of `max_id` − IDs issued: what the table gave away that nobody received.
 *
 * Options (environment): BENCH_RESTARTS (10; 2 when quick), BENCH_IDS_PER_RUN (300; 50 when
 * quick), BENCH_STEP (1000).
 */
import { MysqlLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { openSegmentModule, withBenchDatabase } from './support/segment-module';
import { fmt, type BenchModule } from './support/report';
import { runAlone } from './support/run';

interface Settings {
  readonly restarts: number;
  readonly idsPerRun: number;
  readonly step: number;
}

function settings(quick: boolean): Settings {
  return {
    restarts: Number(process.env.BENCH_RESTARTS ?? (quick ? 2 : 10)),
    idsPerRun: Number(process.env.BENCH_IDS_PER_RUN ?? (quick ? 50 : 300)),
    step: Number(process.env.BENCH_STEP ?? 1000),
  };
}

async function measure(
  { restarts, idsPerRun, step }: Settings,
  handBackOnClose: boolean,
): Promise<{ issued: number; growth: bigint }> {
  return withBenchDatabase({ restarts: step }, async (db, dataSource) => {
    const seen = new Set<bigint>();
    for (let run = 0; run < restarts; run++) {
      const leaf = await openSegmentModule({
        store: new MysqlLeafAllocStore(dataSource),
        handBackOnClose,
      });
      try {
        for (let i = 0; i < idsPerRun; i++) {
          const id = await leaf.segments.get('restarts');
          if (seen.has(id)) throw new Error(`ID ${id} issued twice`);
          seen.add(id);
          if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        await leaf.close();
      }
    }
    const maxId = BigInt((await db.maxId('restarts')) ?? '1');
    return { issued: seen.size, growth: maxId - 1n };
  });
}

/** IDs skipped per graceful restart, with the hand-back against without it. */
export const bench: BenchModule = {
  name: 'segment-restarts',
  title: 'Segment restarts (MariaDB)',
  async run(context) {
    const run = settings(context.quick);
    const perRestart: Record<'with' | 'without', number> = { with: NaN, without: NaN };
    for (const handBack of [false, true]) {
      const { issued, growth } = await measure(run, handBack);
      const skipped = growth - BigInt(issued);
      perRestart[handBack ? 'with' : 'without'] = Number(skipped) / run.restarts;
      context.log(
        `${handBack ? 'with hand-back   ' : 'without hand-back'}  IDs issued ${issued}, ` +
          `max_id growth ${growth}, skipped ${skipped} (${(Number(skipped) / run.restarts).toFixed(1)} per restart)`,
      );
    }
    return [
      {
        measurement:
          `IDs skipped per graceful restart (${run.restarts} restarts, ${run.idsPerRun} IDs ` +
          `per run, step ${fmt(run.step)})`,
        figure: `${fmt(perRestart.with, 1)} with the hand-back`,
        baseline: `${fmt(perRestart.without, 1)} without it`,
        ratio: '—',
        target: '0 with the hand-back',
        met: perRestart.with === 0,
      },
    ];
  },
};

if (require.main === module) runAlone(bench);
