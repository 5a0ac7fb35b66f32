/**
 * A graceful stop of the real process under load, with both modes on MariaDB and ZooKeeper:
 * SIGTERM while requests are in flight → every request that was answered is a 200 (in-flight
 * requests finish; afterwards the socket is closed, never a 5xx), the unused IDs are handed
 * back, the liveness node is deleted and the lease recorded as released, and the process
 * exits 0 by itself within the grace period — which it can only do with no handle left open.
 */
import { randomBytes } from 'node:crypto';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { tempDir } from './support/app';
import { AppProcess, killAllAppProcesses } from './support/app-process';
import { HttpClient } from './support/http-client';
import { sleep } from './support/id-load';
import { describeWithServices, zookeeperConnectString } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { connectZookeeperAdmin, deleteTree } from './support/zookeeper';

const TAG = 'shutdown';
/** Well inside the Kubernetes grace period (45 s) minus the preStop delay (10 s). */
const GRACE_MS = 15_000;

describeWithServices(['mysql', 'zookeeper'], 'SIGTERM under load', () => {
  let db: TestDatabase;
  let admin: ZookeeperClient;
  const dir = tempDir('leaf-shutdown');
  const name = `e2e-shutdown-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
    await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 100000)', [TAG]);
    admin = await connectZookeeperAdmin();
  });
  afterAll(async () => {
    await killAllAppProcesses();
    await db?.drop();
    await deleteTree(admin, `/snowflake/${name}`);
    await admin?.close();
    dir.remove();
  });

  it('finishes in-flight requests, hands back, releases ZooKeeper and exits 0', async () => {
    const app = AppProcess.spawn(
      {
        PORT: '0',
        HOST: '127.0.0.1',
        LEAF_DB_URL: db.url,
        LEAF_NAME: name,
        LEAF_ZK_ADDRESS: zookeeperConnectString(),
        LEAF_SNOWFLAKE_ADVERTISE: '127.0.0.1:18301',
        LEAF_STATE_DIR: dir.path,
        LEAF_ACCESS_LOG: 'false',
      },
      { timeoutMs: 60_000 },
    );
    const port = await app.listening();
    const client = new HttpClient(`http://127.0.0.1:${port}`, 8);
    const statuses: number[] = [];
    const segmentIds: bigint[] = [];
    const failedAt: number[] = [];
    let running = true;
    const loops = Array.from({ length: 8 }, async (_, i) => {
      const route = i % 2 === 0 ? `/api/segment/get/${TAG}` : '/api/snowflake/get/k';
      while (running) {
        try {
          const answer = await client.send(route);
          statuses.push(answer.status);
          if (i % 2 === 0 && answer.status === 200) segmentIds.push(BigInt(answer.body));
        } catch {
          failedAt.push(Date.now()); // the listener is closed: connection refused or reset
          await sleep(20);
        }
      }
    });
    await sleep(1500);
    const stopAt = Date.now();
    const exit = await app.stop('SIGTERM');
    const stopMs = Date.now() - stopAt;
    running = false;
    await Promise.all(loops);
    client.close();

    expect({ code: exit.code, signal: exit.signal, timedOut: exit.timedOut }).toEqual({
      code: 0,
      signal: null,
      timedOut: false,
    });
    expect(stopMs).toBeLessThan(GRACE_MS);
    // Connections fail only once the stop began.
    expect(failedAt.filter((at) => at < stopAt)).toEqual([]);
    expect(statuses.length).toBeGreaterThan(100);
    // Every answer was an ID or a typed "shutting down"; never a 500.
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(exit.stdout).toMatch(/Handed back \d+ unused ID\(s\) of 1 tag\(s\)/);
    const highest = segmentIds.reduce((a, b) => (b > a ? b : a), 0n);
    expect(BigInt((await db.maxId(TAG))!)).toBe(highest + 1n);
    // ZooKeeper: the liveness node is gone and the node records the released lease.
    await expect(admin.getData(`/snowflake/${name}/alive/0`)).rejects.toMatchObject({
      zkCode: 'NO_NODE',
    });
    const [child] = await admin.getChildren(`/snowflake/${name}/forever`);
    const node = JSON.parse(
      (await admin.getData(`/snowflake/${name}/forever/${child}`)).data.toString(),
    ) as { reservedUntil: number; horizon: number };
    expect(node.horizon).toBe(node.reservedUntil);
  }, 60_000);
});
