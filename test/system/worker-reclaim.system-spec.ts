/**
 * The long worker-ID reclaim run (`npm run test:system`; docs/reliability.md, "Worker-ID
 * reclaim"): kill -9 / start cycles of the application as it ships (`node
 * dist/src/main.js`, configuration by environment only, `LEAF_SNOWFLAKE_RECLAIM` not set,
 * so the default when-exhausted applies), each start with a new identity and state
 * directory (a Deployment's pods), at most three alive at once, every tenth start with its
 * clock 2 s behind (libfaketime), Leaf's 10-bit worker field. The first 1,024 starts use
 * fresh sequences; every later one must take over the worker ID of a killed process.
 * Passes with no refused start, never two live holders of one worker ID, no ID handed out
 * twice and no millisecond of a worker ID issued by two processes. Every setting of the
 * processes is at its default but the identity, namespace and state directory.
 *
 * Size: `LEAF_RECLAIM_CYCLES` (default 3,000) and `LEAF_RECLAIM_WORKER_BITS` (default 10;
 * fewer give the rest of the field to `LEAF_SNOWFLAKE_DATA_CENTER_BITS`, so the namespace
 * is exhausted sooner, e.g. 7 bits: 128 worker IDs). The short version is
 * worker-reclaim.e2e-spec.ts.
 */
import { randomBytes } from 'node:crypto';
import { LEAF_LAYOUT } from '@app/leaf/core/snowflake/snowflake-layout';
import { faketimeAvailable, LIBFAKETIME_MT } from '../support/faketime';
import { describeWhen, describeWithServices, zookeeperConnectString } from '../support/services';
import { deleteTree, withZookeeperAdmin } from '../support/zookeeper';
import { runReclaimCycles, summarize } from './harness/reclaim-cycles';

const CYCLES = Number(process.env.LEAF_RECLAIM_CYCLES ?? 3000);
const WORKER_BITS = Number(process.env.LEAF_RECLAIM_WORKER_BITS ?? 10);
const WORKER_IDS = 2 ** WORKER_BITS;
const DATA_CENTER_BITS = 10 - WORKER_BITS;

describeWhen(
  faketimeAvailable(),
  `${LIBFAKETIME_MT} (install with \`bash scripts/services.sh faketime\`)`,
  'worker-ID reclaim through the app, long run',
  () =>
    describeWithServices(['zookeeper'], `${CYCLES} kill -9 / start cycles`, () => {
      const name = `system-reclaim-${randomBytes(4).toString('hex')}`;

      afterAll(() => withZookeeperAdmin((admin) => deleteTree(admin, `/snowflake/${name}`)));

      it(
        `${CYCLES} starts with a new identity each, ${WORKER_IDS} worker IDs, clock 2 s behind at every tenth: no exhaustion, no two live holders, no repeated ID`,
        async () => {
          const result = await runReclaimCycles({
            zk: zookeeperConnectString(),
            name,
            cycles: CYCLES,
            concurrency: 3,
            env:
              DATA_CENTER_BITS > 0
                ? { LEAF_SNOWFLAKE_DATA_CENTER_BITS: String(DATA_CENTER_BITS) }
                : {},
            layout: { ...LEAF_LAYOUT, dataCenterBits: DATA_CENTER_BITS, workerBits: WORKER_BITS },
            faketimeEvery: 10,
            faketimeOffsetMs: -2000,
            maxLiveMs: 300,
            deadlineMs: 4 * 3_600_000,
          });
          console.log(`worker-reclaim system: ${summarize(result)}`);
          expect(result.failures).toEqual({});
          expect(result.starts).toBe(CYCLES);
          expect(result.unique).toMatchObject({ valid: true, duplicateCount: 0 });
          expect(result.snowflake.valid).toBe(true);
          expect(result.overlaps).toEqual([]);
          expect(result.maxAlive).toBeLessThanOrEqual(3);
          expect(result.clockBehindStarts).toBe(Math.floor(CYCLES / 10));
          expect(result.reusedWorkerIds).toBeGreaterThanOrEqual(CYCLES - WORKER_IDS);
          expect(result.reclaimLogs).toBe(result.reusedWorkerIds);
          const nodes = await withZookeeperAdmin((admin) =>
            admin.getChildren(`/snowflake/${name}/forever`),
          );
          expect(nodes.length).toBeLessThanOrEqual(WORKER_IDS);
        },
        5 * 3_600_000,
      );
    }),
);
