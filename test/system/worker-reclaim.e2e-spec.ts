/**
 * Worker-ID reclaim under kill -9 / start cycles, through the application as it ships
 * (docs/reliability.md, "Worker-ID reclaim"): the short run of `npm run test:system-ci`; the long one is
 * worker-reclaim.system-spec.ts (`npm run test:system`). Each start is a new
 * `node dist/src/main.js` (the build, when newer than the sources) with a new identity
 * and state directory, configured by environment only, `LEAF_SNOWFLAKE_RECLAIM` not set
 * (the default, when-exhausted, applies). Two operator settings keep it short:
 * `LEAF_SNOWFLAKE_DATA_CENTER_BITS=6` leaves 4 bits (16 worker IDs) to the worker field, so
 * the namespace is exhausted after 16 starts, and `LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS=0` makes
 * a killed holder's horizon its time lease (10 s) instead of 60 s, so a takeover waits
 * about 12 s after a kill rather than a minute.
 */
import { randomBytes } from 'node:crypto';
import { LEAF_LAYOUT } from '@app/leaf/core/snowflake/snowflake-layout';
import { faketimeAvailable, LIBFAKETIME_MT } from '../support/faketime';
import { describeWhen, describeWithServices, zookeeperConnectString } from '../support/services';
import { deleteTree, withZookeeperAdmin } from '../support/zookeeper';
import { runReclaimCycles, summarize } from './harness/reclaim-cycles';

const CYCLES = 24;
const WORKER_IDS = 16;

describeWhen(
  faketimeAvailable(),
  `${LIBFAKETIME_MT} (install with \`bash scripts/services.sh faketime\`)`,
  'worker-ID reclaim through the app (real processes, real ZooKeeper)',
  () =>
    describeWithServices(
      ['zookeeper'],
      'kill -9 / start cycles with a new identity each time',
      () => {
        const name = `e2e-reclaim-${randomBytes(4).toString('hex')}`;

        afterAll(() => withZookeeperAdmin((admin) => deleteTree(admin, `/snowflake/${name}`)));

        it(`${CYCLES} cycles on ${WORKER_IDS} worker IDs, clock 2 s behind at every tenth start: no exhaustion, no two live holders, no repeated ID; the namespace stops growing`, async () => {
          const result = await runReclaimCycles({
            zk: zookeeperConnectString(),
            name,
            cycles: CYCLES,
            concurrency: 3,
            env: { LEAF_SNOWFLAKE_DATA_CENTER_BITS: '6', LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS: '0' },
            layout: { ...LEAF_LAYOUT, dataCenterBits: 6, workerBits: 4 },
            faketimeEvery: 10,
            faketimeOffsetMs: -2000,
            maxLiveMs: 300,
            deadlineMs: 150_000,
          });
          console.log(`worker-reclaim e2e: ${summarize(result)}`);
          expect(result.failures).toEqual({});
          expect(result.starts).toBe(CYCLES);
          expect(result.unique).toMatchObject({ valid: true, duplicateCount: 0 });
          expect(result.snowflake.valid).toBe(true);
          expect(result.overlaps).toEqual([]);
          expect(result.unique.ids).toBeGreaterThan(CYCLES);
          expect(result.maxAlive).toBeLessThanOrEqual(3);
          expect(result.clockBehindStarts).toBe(Math.floor(CYCLES / 10));
          // More starts than worker IDs: the later ones took over IDs of killed processes,
          // and the namespace holds no more nodes than the field has worker IDs.
          expect(result.reusedWorkerIds).toBeGreaterThanOrEqual(CYCLES - WORKER_IDS);
          expect(result.reclaimLogs).toBe(result.reusedWorkerIds);
          const nodes = await withZookeeperAdmin((admin) =>
            admin.getChildren(`/snowflake/${name}/forever`),
          );
          expect(nodes.length).toBeLessThanOrEqual(WORKER_IDS);
        }, 240_000);
      },
    ),
);
