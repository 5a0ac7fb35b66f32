/**
 * Worker-ID reclaim with real processes against real ZooKeeper (docs/design.md, "Reclaiming
 * worker IDs"), the short version that runs with `npm test`; the 3,000-cycle one is
 * worker-reclaim.system-spec.ts (`npm run test:system`).
 *
 * The processes are test/support/reclaim-worker.ts: the library's `SnowflakeWorker.start`
 * (registration, reclaim, liveness node, time lease: the code the application's
 * SnowflakeService runs) with the real ZooKeeper client and state file, compiled once,
 * because the whole application takes seconds to start under ts-node. Readiness lines are
 * `SnowflakeWorker.readiness()`, what `/health/ready/snowflake` reports.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { SnowflakeLayout } from '@app/leaf/core/snowflake/snowflake-layout';
import { eventually } from '@app/leaf/testing/eventually';
import { faketimeAvailable, LIBFAKETIME_MT } from '../support/faketime';
import { sleep } from '../support/id-load';
import {
  buildReclaimWorker,
  removeReclaimWorker,
  ReclaimWorkerProcess,
  runReclaimCycles,
  type ReclaimWorkerEnv,
} from '../support/reclaim-cycles';
import { describeWhen, describeWithServices, zookeeperConnectString } from '../support/services';
import { connectZookeeperAdmin, deleteTree, withZookeeperAdmin } from '../support/zookeeper';

const SESSION_TIMEOUT_MS = 4000;

describeWhen(
  faketimeAvailable(),
  `${LIBFAKETIME_MT} (install with \`bash scripts/services.sh faketime\`)`,
  'worker-ID reclaim (real processes, real ZooKeeper)',
  () =>
    describeWithServices(
      ['zookeeper'],
      'kill -9 / start cycles with a new identity each time',
      () => {
        let admin: ZookeeperClient;
        let script: string;
        const namespaces: string[] = [];

        beforeAll(() => {
          script = buildReclaimWorker();
        }, 120_000);
        // A fresh admin client per test: an idle one can expire on a loaded machine.
        beforeEach(async () => {
          admin = await connectZookeeperAdmin();
        });
        afterEach(() => admin.close());
        afterAll(async () => {
          await withZookeeperAdmin(async (cleaner) => {
            for (const name of namespaces) await deleteTree(cleaner, `/snowflake/${name}`);
          });
          removeReclaimWorker();
        });

        function namespace(): string {
          const name = `e2e-reclaim-${randomBytes(4).toString('hex')}`;
          namespaces.push(name);
          return name;
        }

        it('150 cycles with 64 worker IDs (6 bits), clock 2 s behind at every tenth start: no exhaustion, no two live holders, no repeated ID; the namespace stops growing', async () => {
          const name = namespace();
          const result = await runReclaimCycles({
            script,
            zk: zookeeperConnectString(),
            name,
            cycles: 150,
            concurrency: 3,
            workerBits: 6,
            reclaim: 'when-exhausted',
            faketimeEvery: 10,
            faketimeOffsetMs: -2000,
            maxLiveMs: 300,
            deadlineMs: 240_000,
            sessionTimeoutMs: SESSION_TIMEOUT_MS,
          });
          console.log(`worker-reclaim e2e: ${JSON.stringify(result)}`);
          expect(result.failures).toEqual({});
          expect(result.starts).toBe(150);
          expect(result.duplicates).toBe(0);
          expect(result.overlaps).toEqual([]);
          expect(result.ids).toBeGreaterThan(150);
          expect(result.maxAlive).toBeLessThanOrEqual(3);
          expect(result.clockBehindStarts).toBe(15);
          // More starts than worker IDs: the later ones took over IDs of killed processes,
          // and the namespace holds no more nodes than the layout has worker IDs.
          expect(result.reusedWorkerIds).toBeGreaterThanOrEqual(150 - 64);
          expect(
            (await admin.getChildren(`/snowflake/${name}/forever`)).length,
          ).toBeLessThanOrEqual(64);
        }, 300_000);

        it('a paused (SIGSTOP) holder stops issuing once its worker ID is taken, and its readiness says why', async () => {
          const name = namespace();
          const stateRoot = mkdtempSync(join(tmpdir(), 'leaf-reclaim-pause-'));
          const layout = new SnowflakeLayout(1288834974657);
          const ids: Array<{ id: string; from: string }> = [];
          const env = (
            dir: string,
            reclaim: string,
          ): ReclaimWorkerEnv & Record<string, string> => ({
            RW_ZK: zookeeperConnectString(),
            RW_NAME: name,
            RW_STATE_DIR: join(stateRoot, dir),
            RW_RECLAIM: reclaim,
            RW_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
          });
          const record = (batch: string[], from: ReclaimWorkerProcess) =>
            batch.forEach((id) => ids.push({ id, from: from.identity }));
          const a = new ReclaimWorkerProcess(script, '10.0.0.1:1', env('a', 'never'), record);
          let b: ReclaimWorkerProcess | null = null;
          try {
            await a.until(() => a.idCount > 0, 30_000, 'IDs');
            a.signal('SIGSTOP');
            const pausedAt = Date.now();
            // Its session ends on the server: ZooKeeper deletes its liveness node.
            await eventually(
              async () => {
                expect(await admin.getChildren(`/snowflake/${name}/alive`)).toEqual([]);
              },
              30_000,
              200,
            );
            // A new identity with reclaim: always takes worker 0 over once A's horizon passed.
            b = new ReclaimWorkerProcess(script, '10.0.0.2:2', env('b', 'always'), record);
            await b.until(() => b!.idCount > 0, 30_000, 'IDs');
            expect(b.workerId).toBe(a.workerId);
            expect(b.stderr).toMatch(/Reclaimed worker ID 0 .* from 10\.0\.0\.1:1/);
            const firstOfB = Math.min(
              ...ids
                .filter((x) => x.from === '10.0.0.2:2')
                .map((x) => layout.decode(x.id).timestamp),
            );
            const aBefore = a.idCount;
            a.signal('SIGCONT');
            // A resumes, finds its session gone and its worker ID taken: not ready, says why.
            await a.until(
              () => a.readiness.some((r) => /^false .*taken over by 10\.0\.0\.2:2/.test(r)),
              20_000,
              'self-fencing readiness',
            );
            await sleep(1000);
            const issuedAfterResume = a.idCount - aBefore;
            // Whatever A printed after resuming (a batch it had taken before the pause) is
            // below B's first millisecond; then nothing more.
            const fromA = ids
              .filter((x) => x.from === '10.0.0.1:1')
              .map((x) => layout.decode(x.id).timestamp);
            expect(Math.max(...fromA)).toBeLessThan(firstOfB);
            const countAfter = a.idCount;
            await sleep(1000);
            expect(a.idCount).toBe(countAfter);
            expect(a.stderr).toMatch(/stops issuing IDs/);
            expect(new Set(ids.map((x) => x.id)).size).toBe(ids.length);
            console.log(
              `worker-reclaim SIGSTOP: paused ${Date.now() - pausedAt} ms, B took worker ${b.workerId}, A printed ${issuedAfterResume} IDs after SIGCONT (all before B's first ms), readiness of A: ${a.readiness.join(' | ')}`,
            );
          } finally {
            a.signal('SIGCONT');
            await a.kill();
            await b?.kill();
            rmSync(stateRoot, { recursive: true, force: true });
          }
        }, 120_000);
      },
    ),
);
