import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { LeafAllocEntity } from '../../adapters/typeorm/leaf-alloc.entity';
import { LEAF_MIGRATIONS, LEAF_MIGRATIONS_TABLE_NAME } from '../../adapters/typeorm/migrations';
import { LeafErrorCode } from '../../core/errors/leaf.error';
import { IdService } from '../../core/id.service';
import type { ForwardResult, SequenceForwardTransport } from '../../core/sequence/forward-batcher';
import { eventually } from '../../testing/eventually';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { LEAF_SEQUENCE_TRANSPORT, LEAF_ZK_CLIENT_FACTORY } from '../leaf.constants';
import { LeafModule } from '../leaf.module';
import type { LeafModuleOptions } from '../leaf-options.interface';
import { SequenceService } from '../sequence/sequence.service';
import { LEAF_SPAN_NAMES, LEAF_TRACER_NAME } from '../../adapters/otel/leaf-span-names';
import { LeafTracing } from './leaf-tracing';

/** A provider of its own per test (never the global one): two apps in one process never mix. */
function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const spans = (name?: string): ReadableSpan[] =>
    exporter.getFinishedSpans().filter((span) => name === undefined || span.name === name);
  return { provider, spans };
}

const durationMs = (span: ReadableSpan) => span.duration[0] * 1000 + span.duration[1] / 1e6;

describe('LeafTracing (OpenTelemetry spans)', () => {
  const modules: TestingModule[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const moduleRef of modules.splice(0)) await moduleRef.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  /** Compiles LeafModule with `options`, enables tracing into `provider` before init, as an app does. */
  async function boot(
    options: LeafModuleOptions,
    provider: BasicTracerProvider,
    override?: (builder: ReturnType<typeof Test.createTestingModule>) => void,
  ) {
    const builder = Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), LeafModule.forRoot(options)],
    });
    override?.(builder);
    const moduleRef = await builder.compile();
    modules.push(moduleRef);
    moduleRef.get(LeafTracing).enable({ tracerProvider: provider });
    await moduleRef.init();
    return moduleRef;
  }

  it('records each range load of a real SQLite leaf_alloc as leaf.segment.allocate (never a span per ID), and a failed one with status ERROR and the LeafError code', async () => {
    const dataSource = new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: [LeafAllocEntity],
      migrations: LEAF_MIGRATIONS,
      migrationsTableName: LEAF_MIGRATIONS_TABLE_NAME,
    });
    await dataSource.initialize();
    cleanups.push(() => dataSource.destroy());
    await dataSource.runMigrations({ transaction: 'each' });
    await dataSource.query(
      "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('order', 1, 100)",
    );
    const { provider, spans } = tracing();
    const moduleRef = await boot({ segment: { dataSource } }, provider);
    const ids = moduleRef.get(IdService);
    const first = await ids.get('segment', 'order');
    for (let i = 0; i < 50; i++) await ids.get('segment', 'order');
    await eventually(() => expect(spans(LEAF_SPAN_NAMES.allocate).length).toBeGreaterThan(0));
    const [load] = spans(LEAF_SPAN_NAMES.allocate);
    expect(load!.instrumentationScope.name).toBe(LEAF_TRACER_NAME);
    expect(load!.kind).toBe(SpanKind.INTERNAL);
    expect(load!.status.code).toBe(SpanStatusCode.UNSET);
    expect(load!.attributes).toEqual({
      'leaf.tag': 'order',
      'leaf.mode': 'segment',
      'leaf.range.start': '1',
      'leaf.range.end': '101',
    });
    expect(first).toBe(1n);
    expect(durationMs(load!)).toBeGreaterThanOrEqual(0);
    // 51 IDs, at most a load and a prefetch: spans are per load, not per ID.
    expect(spans().length).toBeLessThanOrEqual(3);

    // The table gone: the next load fails in the store, an AllocationError.
    await dataSource.query('DROP TABLE leaf_alloc');
    const before = spans(LEAF_SPAN_NAMES.allocate).length;
    await ids.getIds('segment', 'order', 100).catch(() => undefined);
    await eventually(() =>
      expect(
        spans(LEAF_SPAN_NAMES.allocate).filter((s) => s.status.code === SpanStatusCode.ERROR),
      ).not.toEqual([]),
    );
    const failed = spans(LEAF_SPAN_NAMES.allocate)
      .slice(before)
      .find((s) => s.status.code === SpanStatusCode.ERROR)!;
    expect(failed.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: LeafErrorCode.ALLOCATION_FAILED,
    });
    expect(failed.attributes['leaf.error.code']).toBe(LeafErrorCode.ALLOCATION_FAILED);
    expect(failed.attributes['leaf.range.start']).toBeUndefined();
    expect(failed.events.map((event) => event.name)).toEqual(['exception']);
  });

  it('records the snowflake time-lease extensions (the worker ID renewed in ZooKeeper and the state file)', async () => {
    const dir = await fs.mkdtemp(path.join(tmpdir(), 'leaf-otel-'));
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
    const zk = new FakeZkClient();
    const { provider, spans } = tracing();
    const moduleRef = await boot(
      {
        segment: false,
        snowflake: {
          stateDir: dir,
          heartbeatIntervalMs: 40,
          leaseMs: 400,
          zookeeper: { connect: 'fake:2181', connectTimeoutMs: 100 },
          advertise: '10.0.0.8:8080',
        },
      },
      provider,
      (builder) => void builder.overrideProvider(LEAF_ZK_CLIENT_FACTORY).useValue(() => zk),
    );
    await eventually(() =>
      expect(spans(LEAF_SPAN_NAMES.leaseExtend).length).toBeGreaterThanOrEqual(3),
    );
    for (const span of spans(LEAF_SPAN_NAMES.leaseExtend)) {
      expect(span.attributes).toEqual({ 'leaf.lease.outcome': 'ok' });
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    }
    // IDs themselves add no span.
    const count = spans().length;
    const ids = moduleRef.get(IdService);
    for (let i = 0; i < 100; i++) await ids.get('snowflake', 'k');
    expect(spans().filter((s) => s.name !== LEAF_SPAN_NAMES.leaseExtend).length).toBe(0);
    expect(spans().length).toBeLessThan(count + 100);
  });

  it('records the sequence election, the issuer’s range loads and the forwarded batches, then the demotion at shutdown', async () => {
    const store = new InMemoryAllocStore().setTag('k', 100);
    const zk = new FakeZkClient();
    const registry = new Map<string, SequenceService>();
    const transport: SequenceForwardTransport = {
      probe: async (address) => registry.get(address)!.instance(),
      send: async (address, items) => {
        const issuer = registry.get(address);
        if (!issuer) throw new Error(`connect ECONNREFUSED ${address}`);
        const answers = await issuer.issueForwarded(items);
        return answers.map((answer): ForwardResult =>
          'error' in answer
            ? { error: new Error('refused') }
            : { start: BigInt(answer.start), end: BigInt(answer.end) },
        );
      },
      close: () => undefined,
    };
    const { provider, spans } = tracing();
    const start = async (address: string, session: FakeZkClient) => {
      const moduleRef = await boot(
        {
          segment: { store },
          sequence: {
            zookeeper: { connect: 'fake:2181', sessionTimeoutMs: 2000 },
            advertise: address,
            groups: 1,
            heartbeatIntervalMs: 50,
            leaseMarginMs: 500,
            waitMs: 4000,
          },
        },
        provider,
        (builder) => {
          builder.overrideProvider(LEAF_ZK_CLIENT_FACTORY).useValue(() => session);
          builder.overrideProvider(LEAF_SEQUENCE_TRANSPORT).useValue(transport);
        },
      );
      registry.set(address, moduleRef.get(SequenceService));
      return moduleRef;
    };
    const a = await start('http://a', zk);
    const b = await start('http://b', zk.newSession());
    await eventually(() => expect(spans(LEAF_SPAN_NAMES.elected)).toHaveLength(1));
    expect(spans(LEAF_SPAN_NAMES.elected)[0]!.attributes).toEqual({
      'leaf.sequence.group': 0,
      'leaf.sequence.term': expect.any(Number),
    });
    await eventually(() => expect(b.get(SequenceService).readiness().ready).toBe(true), 4000);
    const viaB = await Promise.all([
      b.get(IdService).get('sequence', 'k'),
      b.get(IdService).get('sequence', 'k'),
      b.get(IdService).getIds('sequence', 'k', 3),
    ]);
    expect(viaB.flat()).toHaveLength(5);
    const forwards = spans(LEAF_SPAN_NAMES.forward);
    expect(forwards).toHaveLength(1);
    expect(forwards[0]!.kind).toBe(SpanKind.CLIENT);
    expect(forwards[0]!.attributes).toEqual({
      'leaf.sequence.issuer': 'http://a',
      'leaf.sequence.calls': 3,
      'leaf.sequence.items': 1,
    });
    const loads = spans(LEAF_SPAN_NAMES.allocate);
    expect(loads.length).toBeGreaterThan(0);
    expect(loads[0]!.attributes).toMatchObject({ 'leaf.mode': 'sequence', 'leaf.tag': 'k' });

    // The issuer stops: it resigns at shutdown (demoted, "resigned"); b's next batch fails.
    await a.close();
    modules.splice(modules.indexOf(a), 1);
    registry.delete('http://a');
    expect(spans(LEAF_SPAN_NAMES.demoted)[0]!.attributes).toEqual({
      'leaf.sequence.group': 0,
      'leaf.sequence.reason': 'resigned',
    });
  }, 20_000);
});
