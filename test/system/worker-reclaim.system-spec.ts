/**
 * The long worker-ID reclaim run (`npm run test:system`): 3,000 kill -9 / start cycles of
 * real processes against real ZooKeeper, each start with a new identity (a Deployment's
 * pods), at most three alive at once, every tenth start with its clock 2 s behind
 * (libfaketime), Leaf's 10-bit worker field. The first 1,024 starts use fresh sequences;
 * every later one must take over the worker ID of a killed process (reclaim:
 * when-exhausted, the default). Passes with no LEAF_WORKER_ID_EXHAUSTED, never two live
 * holders of one worker ID, and no ID handed out twice. The processes run the library's
 * `SnowflakeWorker.start` (test/support/reclaim-worker.ts), the code the application runs;
 * the short version is worker-reclaim.e2e-spec.ts.
 */
import { randomBytes } from 'node:crypto';
import { faketimeAvailable, LIBFAKETIME_MT } from '../support/faketime';
import {
  buildReclaimWorker,
  removeReclaimWorker,
  runReclaimCycles,
} from '../support/reclaim-cycles';
import { describeWhen, describeWithServices, zookeeperConnectString } from '../support/services';
import { deleteTree, withZookeeperAdmin } from '../support/zookeeper';

const CYCLES = Number(process.env.LEAF_RECLAIM_CYCLES ?? 3000);

describeWhen(
  faketimeAvailable(),
  `${LIBFAKETIME_MT} (install with \`bash scripts/services.sh faketime\`)`,
  'worker-ID reclaim, long run',
  () =>
    describeWithServices(['zookeeper'], `${CYCLES} kill -9 / start cycles`, () => {
      const name = `system-reclaim-${randomBytes(4).toString('hex')}`;

      afterAll(async () => {
        await withZookeeperAdmin((admin) => deleteTree(admin, `/snowflake/${name}`));
        removeReclaimWorker();
      });

      it(
        `${CYCLES} starts with a new identity each, 1,024 worker IDs, clock 2 s behind at every tenth: no exhaustion, no two live holders, no repeated ID`,
        async () => {
          const result = await runReclaimCycles({
            script: buildReclaimWorker(),
            zk: zookeeperConnectString(),
            name,
            cycles: CYCLES,
            concurrency: 3,
            workerBits: 10,
            reclaim: 'when-exhausted',
            faketimeEvery: 10,
            faketimeOffsetMs: -2000,
            maxLiveMs: 300,
            deadlineMs: 3 * 3_600_000,
            sessionTimeoutMs: 4000,
          });
          console.log(`worker-reclaim system: ${JSON.stringify(result)}`);
          expect(result.failures).toEqual({});
          expect(result.starts).toBe(CYCLES);
          expect(result.duplicates).toBe(0);
          expect(result.overlaps).toEqual([]);
          expect(result.maxAlive).toBeLessThanOrEqual(3);
          expect(result.clockBehindStarts).toBe(Math.floor(CYCLES / 10));
          expect(result.reusedWorkerIds).toBeGreaterThanOrEqual(CYCLES - 1024);
          const nodes = await withZookeeperAdmin((admin) =>
            admin.getChildren(`/snowflake/${name}/forever`),
          );
          expect(nodes.length).toBeLessThanOrEqual(1024);
        },
        4 * 3_600_000,
      );
    }),
);
