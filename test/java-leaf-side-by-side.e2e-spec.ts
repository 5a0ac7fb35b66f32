/**
 * Moving from the Java Leaf (docs/operations.md): both services run side by side during
 * the switch.
 *
 * - Segment: a Java instance allocates on the same `leaf_alloc` row with Leaf's own SQL
 *   (`UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?`, then `SELECT` in one
 *   transaction) while our application serves the same tag under load: no ID is in two
 *   ranges.
 * - Snowflake: our instances register in a namespace that already holds Java-format worker
 *   nodes (`{ip, port, timestamp}` data, ports as strings as Leaf's Jackson writes them):
 *   they take new sequences, never a Java worker's, and leave the Java nodes untouched.
 */
import { randomBytes } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SnowflakeService } from 'nestjs-leaf';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { startApp, tempDir } from './support/app';
import { HttpClient } from './support/http-client';
import { describeWithServices, zookeeperConnectString } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { connectZookeeperAdmin, deleteTree } from './support/zookeeper';

const TAG = 'side-by-side';

describeWithServices(['mysql', 'zookeeper'], 'side by side with the Java Leaf', () => {
  let db: TestDatabase;
  let admin: ZookeeperClient;
  const dir = tempDir('leaf-java');
  const name = `e2e-java-${randomBytes(4).toString('hex')}`;
  const apps: NestFastifyApplication[] = [];

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
    await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 100)', [TAG]);
    admin = await connectZookeeperAdmin();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await db?.drop();
    await deleteTree(admin, `/snowflake/${name}`);
    await admin?.close();
    dir.remove();
  });

  /** One allocation exactly as the Java Leaf's MyBatis mapper runs it. */
  async function javaAllocate(): Promise<{ start: bigint; end: bigint }> {
    const connection = await db.connect();
    try {
      await connection.beginTransaction();
      await connection.query('UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?', [
        TAG,
      ]);
      const [rows] = await connection.query(
        'SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?',
        [TAG],
      );
      await connection.commit();
      const row = (rows as Array<{ max_id: string; step: number }>)[0]!;
      const max = BigInt(row.max_id);
      return { start: max - BigInt(row.step), end: max };
    } finally {
      await connection.end();
    }
  }

  it('segment: Java allocations and ours on one row never overlap', async () => {
    const app = await startApp(
      { LEAF_DB_URL: db.url, LEAF_SNOWFLAKE_ENABLED: 'false', LEAF_STATE_DIR: dir.path },
      { listen: true },
    );
    apps.push(app);
    const address = app.getHttpServer().address() as { port: number };
    const client = new HttpClient(`http://127.0.0.1:${address.port}`, 8);
    const ours: bigint[] = [];
    const javaRanges: Array<{ start: bigint; end: bigint }> = [];
    try {
      const java = (async () => {
        for (let i = 0; i < 40; i++) javaRanges.push(await javaAllocate());
      })();
      const node = Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = 0; i < 60; i++) {
            const answer = await client.send(`/api/segment/ids/${TAG}?count=20`);
            expect(answer.status).toBe(200);
            ours.push(...(JSON.parse(answer.body) as { ids: string[] }).ids.map(BigInt));
          }
        }),
      );
      await Promise.all([java, node]);
    } finally {
      client.close();
    }
    expect(new Set(ours).size).toBe(ours.length);
    const inJavaRange = ours.filter((id) => javaRanges.some((r) => id >= r.start && id < r.end));
    expect(inJavaRange).toEqual([]);
    expect(ours.length).toBe(8 * 60 * 20);
  }, 60_000);

  it('snowflake: our instances take new sequences next to Java-format worker nodes, which stay untouched', async () => {
    const parent = `/snowflake/${name}/forever`;
    await admin.mkdirp(parent);
    const javaNodes: string[] = [];
    for (const ip of ['10.9.0.1', '10.9.0.2']) {
      const data = Buffer.from(
        JSON.stringify({ ip, port: '2181', timestamp: Date.now() - 60_000 }),
      );
      javaNodes.push(await admin.createPersistentSequential(`${parent}/${ip}:2181-`, data));
    }
    const before = await Promise.all(javaNodes.map((path) => admin.getData(path)));

    const workerIds: number[] = [];
    for (const port of [18101, 18102]) {
      const app = await startApp({
        LEAF_SEGMENT_ENABLED: 'false',
        LEAF_NAME: name,
        LEAF_ZK_ADDRESS: zookeeperConnectString(),
        LEAF_SNOWFLAKE_ADVERTISE: `127.0.0.1:${port}`,
        LEAF_STATE_DIR: dir.path,
      });
      apps.push(app);
      const snowflake = app.get(SnowflakeService);
      workerIds.push(snowflake.workerId!);
      expect(snowflake.decode(await snowflake.get()).workerId).toBe(snowflake.workerId);
    }
    // The Java workers hold sequences 0 and 1.
    expect(workerIds).toEqual([2, 3]);
    const after = await Promise.all(javaNodes.map((path) => admin.getData(path)));
    expect(after.map((node) => node.data.toString())).toEqual(
      before.map((node) => node.data.toString()),
    );
    expect(after.map((node) => node.version)).toEqual(before.map((node) => node.version));
  }, 60_000);
});
