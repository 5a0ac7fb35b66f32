/**
 * Worker-ID reclaim through the application as it ships (docs/reliability.md, "Worker-ID
 * reclaim"): a namespace whose every worker ID was used by instances that are long gone
 * (leases an hour old, no liveness node, every other node in the Java Leaf's format), and
 * new instances started as a deployer starts them: `node dist/src/main.js` (the build,
 * when it is newer than the sources), with nothing but `LEAF_ZK_ADDRESS`,
 * `LEAF_SNOWFLAKE_ADVERTISE`, `LEAF_NAME`, `PORT`, `LEAF_STATE_DIR` and
 * `LEAF_SEGMENT_ENABLED=false`; `LEAF_SNOWFLAKE_RECLAIM` is not set, so the library's default (`when-exhausted`) decides.
 */
import { randomBytes } from 'node:crypto';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { describeWithServices, zookeeperConnectString } from '../support/services';
import { connectZookeeperAdmin, deleteTree, withZookeeperAdmin } from '../support/zookeeper';
import { Cluster, ClusterInstance } from './harness/cluster';
import { seedGoneIdentities } from './harness/gone-identities';
import { checkUnique } from './harness/checker';
import { History } from './harness/history';
import { Load, snowflakeRoute } from './harness/load';
import { readyWorkerId } from './harness/reclaim-cycles';
import { checkSnowflake } from './harness/snowflake-checker';

jest.setTimeout(90_000);

/** Leaf's layout, the default: 1,024 worker IDs. */
const WORKER_IDS = 1024;
const INSTANCES = 4;

describeWithServices(
  ['zookeeper'],
  'worker-ID reclaim through the app: a namespace exhausted by gone identities',
  () => {
    let admin: ZookeeperClient;
    const namespaces: string[] = [];

    beforeAll(async () => {
      admin = await connectZookeeperAdmin();
    });
    afterAll(async () => {
      await admin?.close();
      await withZookeeperAdmin(async (cleaner) => {
        for (const name of namespaces) await deleteTree(cleaner, `/snowflake/${name}`);
      });
    });

    it(`${WORKER_IDS} worker IDs (the default layout) all used by gone identities (half Java Leaf nodes), LEAF_SNOWFLAKE_RECLAIM unset: ${INSTANCES} new instances start, each with its own reclaimed worker ID, and serve; no ID repeats`, async () => {
      const workerIds = WORKER_IDS;
      const instances = INSTANCES;
      const name = `e2e-exhausted-${randomBytes(4).toString('hex')}`;
      namespaces.push(name);
      const seeded = await seedGoneIdentities(admin, name, { count: workerIds });
      const bySequence = new Map(seeded.map((node) => [node.sequence, node]));

      const cluster = Cluster.create({
        size: instances,
        defaults: 'deployer',
        env: (_, index) => ({
          LEAF_ZK_ADDRESS: zookeeperConnectString(),
          LEAF_SNOWFLAKE_ADVERTISE: `127.0.0.1:${17_400 + index}`,
          LEAF_NAME: name,
          LEAF_SEGMENT_ENABLED: 'false',
        }),
      });
      try {
        const started = Date.now();
        await Promise.all(cluster.instances.map((instance) => instance.start()));
        const startMs = Date.now() - started;

        const ids: Record<string, number> = {};
        for (const instance of cluster.instances) {
          ids[instance.name] = await readyWorkerId(instance);
        }
        const taken = Object.values(ids);
        expect(new Set(taken).size).toBe(instances);
        const previous: string[] = [];
        for (const [index, instance] of cluster.instances.entries()) {
          const workerId = ids[instance.name]!;
          expect(workerId).toBeLessThan(workerIds);
          const gone = bySequence.get(workerId)!;
          // It took the node over: its log says from whom, the node now names it.
          expect(instance.output).toContain(
            `Reclaimed worker ID ${workerId} (/snowflake/${name}/forever/${gone.identity}-${String(workerId).padStart(10, '0')}) from ${gone.identity}`,
          );
          const node = JSON.parse(
            (
              await admin.getData(
                `/snowflake/${name}/forever/${gone.identity}-${String(workerId).padStart(10, '0')}`,
              )
            ).data.toString(),
          ) as { ip: string; port: number };
          expect(`${node.ip}:${node.port}`).toBe(`127.0.0.1:${17_400 + index}`);
          expect(instance.output).not.toContain('LEAF_WORKER_ID_EXHAUSTED');
          previous.push(gone.format);
        }
        // The oldest horizons alternate between the formats: both were taken over.
        expect(new Set(previous)).toEqual(new Set(['java', 'app']));

        const history = new History();
        const load = Load.start({
          targets: cluster.instances,
          routes: [snowflakeRoute('ids', 'k', 50), snowflakeRoute('get', 'k')],
          history,
          concurrency: instances * 2,
          durationMs: 2_000,
        });
        const summary = await load.finished;
        const unique = checkUnique(history);
        const snowflake = checkSnowflake(history.operations, {
          workerIds: ids,
        });
        console.log(
          `[reclaim exhausted] ${workerIds} gone identities, ${instances} instances started in ${startMs} ms with worker IDs ${taken.join(', ')} (taken from ${previous.join(', ')} nodes); load ${JSON.stringify(summary)}; ${unique.ids} IDs, ${unique.duplicateCount} duplicates`,
        );
        expect(summary.fail).toBe(0);
        for (const instance of cluster.instances) {
          expect(snowflake.perProcess[instance.name]?.ids ?? 0).toBeGreaterThan(0);
        }
        expect(unique).toMatchObject({ valid: true, duplicateCount: 0 });
        expect(snowflake.valid).toBe(true);
        // The registrations past the last worker ID were removed again: no node was added.
        expect((await admin.getChildren(`/snowflake/${name}/forever`)).length).toBe(workerIds);
      } finally {
        await cluster.dispose();
      }
    });

    it('the control: the same namespace refuses a start with LEAF_SNOWFLAKE_RECLAIM=never (what the app did with the variable unset before 1ce874f)', async () => {
      const name = `e2e-exhausted-${randomBytes(4).toString('hex')}`;
      namespaces.push(name);
      await seedGoneIdentities(admin, name, { count: 1024 });
      const instance = ClusterInstance.create(
        'never',
        {
          LEAF_ZK_ADDRESS: zookeeperConnectString(),
          LEAF_SNOWFLAKE_ADVERTISE: '127.0.0.1:17499',
          LEAF_NAME: name,
          LEAF_SEGMENT_ENABLED: 'false',
          LEAF_SNOWFLAKE_RECLAIM: 'never',
        },
        { defaults: 'deployer' },
      );
      try {
        await expect(instance.start()).rejects.toThrow(/exited \(code 1/);
        expect(instance.output).toMatch(
          /Leaf failed to start: \[LEAF_WORKER_ID_EXHAUSTED\].*127\.0\.0\.1:17499-0000001024/,
        );
      } finally {
        await instance.dispose();
      }
    });
  },
);
