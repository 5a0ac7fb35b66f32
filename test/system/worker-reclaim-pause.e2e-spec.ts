/**
 * A paused holder whose worker ID is reclaimed, through the application as it ships
 * (docs/reliability.md, "Worker-ID reclaim"): `A` (`node dist/src/main.js`, the build
 * when newer than the sources) is frozen with SIGSTOP until its ZooKeeper session has
 * expired and its horizon has passed; `B`, a new identity started with
 * `LEAF_SNOWFLAKE_RECLAIM=always` (a reclaimable worker ID before a fresh sequence, as
 * for a Deployment), takes A's worker ID over; A, resumed, must stop issuing and say why
 * on its readiness. Operator settings by environment only: sessions of 4 s
 * (`LEAF_ZK_SESSION_TIMEOUT_MS`) and no local runway (`LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS=0`,
 * so A's horizon is its 10 s time lease), to keep the wait short.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { eventually } from '@app/leaf/testing/eventually';
import { HttpClient } from '../support/http-client';
import { sleep } from '../support/id-load';
import { describeWithServices, zookeeperConnectString } from '../support/services';
import { connectZookeeperAdmin, deleteTree } from '../support/zookeeper';
import { checkUnique } from './harness/checker';
import { ClusterInstance } from './harness/cluster';
import { History } from './harness/history';
import { Load, snowflakeRoute } from './harness/load';
import { readyWorkerId } from './harness/reclaim-cycles';
import { checkSnowflake } from './harness/snowflake-checker';

jest.setTimeout(120_000);

/** The application's default reclaim margin (ms past the horizon). */
const MARGIN_MS = 2000;

async function readiness(instance: ClusterInstance): Promise<{ status: number; body: string }> {
  const client = new HttpClient(instance.baseUrl()!, 1);
  try {
    return await client.send('/health/ready/snowflake');
  } finally {
    client.close();
  }
}

describeWithServices(['zookeeper'], 'worker-ID reclaim through the app: a paused holder', () => {
  const name = `e2e-reclaim-pause-${randomBytes(4).toString('hex')}`;
  let admin: ZookeeperClient;
  const instances: ClusterInstance[] = [];

  beforeAll(async () => {
    admin = await connectZookeeperAdmin();
  });
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.dispose()));
    await deleteTree(admin, `/snowflake/${name}`);
    await admin.close();
  });

  const instance = (label: string, identity: string, env: Record<string, string> = {}) => {
    const created = ClusterInstance.create(
      label,
      {
        LEAF_ZK_ADDRESS: zookeeperConnectString(),
        LEAF_SNOWFLAKE_ADVERTISE: identity,
        LEAF_NAME: name,
        LEAF_SEGMENT_ENABLED: 'false',
        LEAF_ZK_SESSION_TIMEOUT_MS: '4000',
        LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS: '0',
        ...env,
      },
      { defaults: 'deployer' },
    );
    instances.push(created);
    return created;
  };

  it('a paused (SIGSTOP) holder stops issuing once another identity reclaimed its worker ID, and its readiness says why', async () => {
    const a = instance('A', '10.0.0.1:1');
    const b = instance('B', '10.0.0.2:2', { LEAF_SNOWFLAKE_RECLAIM: 'always' });
    await a.start();
    const workerId = await readyWorkerId(a);
    const history = new History();
    const load = Load.start({
      targets: [a, b],
      routes: [snowflakeRoute('ids', 'k', 20)],
      history,
      concurrency: 2,
      pauseMs: 5,
      durationMs: 100_000, // stopped below
      timeoutMs: 2_000,
    });
    let pausedAt = 0;
    let resumedAt = 0;
    let fencedAt = 0;
    try {
      await eventually(async () => expect(load.okCount).toBeGreaterThan(0), 10_000, 50);
      a.pause();
      pausedAt = Date.now();
      // Its session ends on the server: ZooKeeper deletes its liveness node.
      await eventually(
        async () => expect(await admin.getChildren(`/snowflake/${name}/alive`)).toEqual([]),
        30_000,
        200,
      );
      // Then its horizon (its last lease) passes by the margin: the worker ID is reclaimable.
      const [node] = await admin.getChildren(`/snowflake/${name}/forever`);
      const path = `/snowflake/${name}/forever/${node}`;
      const { horizon } = JSON.parse((await admin.getData(path)).data.toString()) as {
        horizon: number;
      };
      await sleep(Math.max(0, horizon + MARGIN_MS + 500 - Date.now()));
      await b.start();
      expect(await readyWorkerId(b)).toBe(workerId);
      expect(b.output).toMatch(
        new RegExp(`Reclaimed worker ID ${workerId} \\(${path}\\) from 10\\.0\\.0\\.1:1`),
      );
      await eventually(
        async () =>
          expect(
            history.filter((op) => op.process === 'B' && op.type === 'ok').length,
          ).toBeGreaterThan(0),
        10_000,
        50,
      );
      a.resume();
      resumedAt = Date.now();
      // A finds its session gone and its worker ID taken: not ready, and says by whom.
      await eventually(
        async () => {
          const answer = await readiness(a);
          expect(answer.status).toBe(503);
          expect(answer.body).toMatch(/taken over by 10\.0\.0\.2:2/);
          fencedAt = Date.now();
        },
        20_000,
        100,
      );
      await sleep(1000);
    } finally {
      await load.stop();
    }
    const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
    const ms = (process: string) =>
      history
        .filter((op) => op.process === process && op.type === 'ok')
        .flatMap((op) => op.ids.map((id) => layout.decode(id).timestamp));
    const fromA = ms('A');
    const fromB = ms('B');
    // A issued nothing once fenced, and every millisecond it used is below B's first.
    const aAfterFence = history.filter(
      (op) => op.process === 'A' && op.type === 'ok' && op.invokeMs > fencedAt,
    );
    expect(aAfterFence).toEqual([]);
    expect(Math.max(...fromA)).toBeLessThan(Math.min(...fromB));
    const unique = checkUnique(history);
    const snowflake = checkSnowflake(history.operations, {
      workerIds: { A: workerId, B: workerId },
    });
    expect(unique).toMatchObject({ valid: true, duplicateCount: 0 });
    expect(snowflake.valid).toBe(true);
    expect(a.output).toMatch(/stops issuing/);
    const okAfterResume = history.filter(
      (op) => op.process === 'A' && op.type === 'ok' && op.completeMs > resumedAt,
    ).length;
    console.log(
      `[reclaim pause] A paused ${resumedAt - pausedAt} ms; B took worker ${workerId}; A answered ${okAfterResume} requests with IDs after SIGCONT (all below B's first ms), fenced ${fencedAt - resumedAt} ms after SIGCONT; ${unique.ids} IDs, ${unique.duplicateCount} duplicates`,
    );
  });
});
