/**
 * Leaf's OpenTelemetry spans against the real services: a range load in MariaDB
 * (`leaf.segment.allocate` with the range the database granted) and snowflake time-lease
 * extensions with the worker ID in a real ZooKeeper. The unit spec
 * (libs/leaf/src/nest/telemetry/leaf-tracing.spec.ts) covers a load on SQLite, the error
 * status, and the sequence election and forwarded batches on the fake ZooKeeper.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { IdService, LeafModule, type LeafModuleOptions } from 'nestjs-leaf';
import { LEAF_SPAN_NAMES, LeafTracing } from 'nestjs-leaf/otel';
import { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { eventually } from '@app/leaf/testing/eventually';
import { describeWithServices, zookeeperConnectString } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { deleteTree } from './support/zookeeper';

describeWithServices(['mysql', 'zookeeper'], 'OpenTelemetry spans on MariaDB and ZooKeeper', () => {
  const name = `e2e-otel-${randomBytes(4).toString('hex')}`;
  const apps: INestApplicationContext[] = [];
  let db: TestDatabase;
  let stateDir: string;
  let admin: ZookeeperClient;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
    await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('order', 1, 1000)");
    stateDir = await fs.mkdtemp(join(tmpdir(), 'leaf-otel-e2e-'));
    admin = new ZookeeperClient({ connect: zookeeperConnectString(), sessionTimeoutMs: 10_000 });
    await admin.connect(5000);
  });

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  afterAll(async () => {
    await deleteTree(admin, `/snowflake/${name}`);
    await admin.close();
    await db?.drop();
    await fs.rm(stateDir, { recursive: true, force: true });
  });

  async function boot(options: LeafModuleOptions) {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const builder = Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), LeafModule.forRoot({ name, ...options })],
    });
    const moduleRef = await builder.compile();
    moduleRef.useLogger(false);
    moduleRef.get(LeafTracing).enable({ tracerProvider: provider });
    const app = await moduleRef.init();
    apps.push(app);
    return {
      app,
      spans: (span: string) => exporter.getFinishedSpans().filter((s) => s.name === span),
    };
  }

  it('a MariaDB range load: leaf.segment.allocate with the range the database granted', async () => {
    const dataSource = await db.openDataSource();
    try {
      const { app, spans } = await boot({ segment: { dataSource } });
      expect(await app.get(IdService).get('segment', 'order')).toBe(1n);
      await eventually(() => expect(spans(LEAF_SPAN_NAMES.allocate).length).toBeGreaterThan(0));
      expect(spans(LEAF_SPAN_NAMES.allocate)[0]!.attributes).toEqual({
        'leaf.tag': 'order',
        'leaf.mode': 'segment',
        'leaf.range.start': '1',
        'leaf.range.end': '1001',
      });
      expect(spans(LEAF_SPAN_NAMES.allocate)[0]!.status.code).toBe(SpanStatusCode.UNSET);
      await apps.pop()!.close();
    } finally {
      await dataSource.destroy();
    }
  });

  it('snowflake: the time-lease extensions of a worker ID held in ZooKeeper', async () => {
    const { spans } = await boot({
      segment: false,
      snowflake: {
        zookeeper: { connect: zookeeperConnectString(), connectTimeoutMs: 3000 },
        advertise: '10.9.9.9:8080',
        stateDir,
        heartbeatIntervalMs: 100,
        leaseMs: 1000,
      },
    });
    await eventually(
      () => expect(spans(LEAF_SPAN_NAMES.leaseExtend).length).toBeGreaterThanOrEqual(3),
      5000,
    );
    for (const span of spans(LEAF_SPAN_NAMES.leaseExtend)) {
      expect(span.attributes).toEqual({ 'leaf.lease.outcome': 'ok' });
    }
  });
});
