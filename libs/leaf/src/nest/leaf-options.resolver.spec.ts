import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { DEFAULT_SNOWFLAKE_EPOCH } from '../core/snowflake/snowflake-layout';
import { resolveLeafOptions } from './leaf-options.resolver';
import { InMemoryAllocStore } from '../testing/in-memory-alloc.store';
import { FakeClock } from '../testing/fake-clock';
import { InMemoryRegionRegistry } from '../testing/in-memory-region.registry';

describe('resolveLeafOptions', () => {
  const store = new InMemoryAllocStore();

  it('applies the documented defaults', () => {
    const options = resolveLeafOptions({ segment: { store }, snowflake: { workerId: 0 } });
    expect(options.name).toBe('leaf');
    expect(options.maxBatchSize).toBe(1000);
    expect(options.segment).toMatchObject({
      maxStep: 1_000_000,
      maxRangeCount: 1_000_000,
      stepDurationMs: 900_000,
      refreshIntervalMs: 60_000,
      loadTimeoutMs: 3000,
      preloadThreshold: 0.9,
      maxConcurrentLoads: 8,
      warmTags: [],
    });
    expect(options.snowflake).toMatchObject({
      workerSource: { kind: 'embedded', workerId: 0 },
      epoch: DEFAULT_SNOWFLAKE_EPOCH,
      leaseMs: 10_000,
      localRunwayMs: 60_000,
      startupMaxWaitMs: 90_000,
      sequenceRandomBound: 100,
      clockBackwardsToleranceMs: 5,
      heartbeatIntervalMs: 3000,
      stateDir: './data',
    });
  });

  it('the high-water mark: ZooKeeper call timeout 2000 ms by default, checked by its rule', () => {
    const resolved = (highWater: object) =>
      resolveLeafOptions({
        segment: { dataSource: {} as never, highWater: { connect: 'zk:2181', ...highWater } },
      }).segment!.highWater;
    expect(resolved({})).toEqual({
      kind: 'zookeeper',
      connect: 'zk:2181',
      sessionTimeoutMs: 10_000,
      callTimeoutMs: 2000,
    });
    expect(resolved({ callTimeoutMs: 500 })).toMatchObject({ callTimeoutMs: 500 });
    expect(() => resolved({ callTimeoutMs: 50 })).toThrow(/segment\.highWater\.callTimeoutMs/);
  });

  it('the high-water mark in a database: MySQL/MariaDB or PostgreSQL, not an allocation database, not with connect', () => {
    const pg = (name: string) => ({ options: { type: 'postgres', database: name } }) as never;
    const allocation = pg('leaf');
    const marks = pg('marks');
    const resolved = (highWater: object, segment: object = { dataSource: allocation }) =>
      resolveLeafOptions({ segment: { ...segment, highWater } as never }).segment!.highWater;
    expect(resolved({ dataSource: marks })).toEqual({
      kind: 'database',
      dataSource: marks,
      callTimeoutMs: 2000,
    });
    expect(() => resolved({ dataSource: allocation })).toThrow(
      /segment\.highWater\.dataSource is an allocation database/,
    );
    expect(() =>
      resolved({ dataSource: allocation }, { dataSources: [pg('a'), allocation] }),
    ).toThrow(/is an allocation database/);
    // Another DataSource object on the same host, port and database.
    expect(() => resolved({ dataSource: pg('leaf') })).toThrow(/is an allocation database/);
    expect(() => resolved({ dataSource: marks, connect: 'zk:2181' })).toThrow(
      /`connect` \(ZooKeeper\) and `dataSource` \(a database\) are exclusive/,
    );
    expect(() =>
      resolved({ dataSource: { options: { type: 'better-sqlite3' } } as never }),
    ).toThrow(/must be MySQL\/MariaDB or PostgreSQL/);
  });

  it('caps ranges separately from batches, at the largest dynamic step by default', () => {
    const resolved = (segment: object) =>
      resolveLeafOptions({ maxBatchSize: 10, segment: { store, ...segment } }).segment;
    expect(resolved({ maxStep: 5000 })).toMatchObject({ maxStep: 5000, maxRangeCount: 5000 });
    expect(resolved({ maxRangeCount: 20_000 })).toMatchObject({ maxRangeCount: 20_000 });
    expect(() => resolved({ maxRangeCount: 0 })).toThrow(
      /segment.maxRangeCount must be an integer/,
    );
  });

  it('leaves snowflake mode off unless configured, and never defaults to worker 0', () => {
    expect(resolveLeafOptions({ segment: false }).snowflake).toBeNull();
    expect(() => resolveLeafOptions({ segment: false, snowflake: {} })).toThrow(
      /needs a worker-ID source: snowflake.zookeeper.*or an explicit snowflake.workerId/,
    );
    expect(() =>
      resolveLeafOptions({
        segment: false,
        snowflake: { workerId: 1, zookeeper: { connect: 'zk:2181' }, advertise: '10.0.0.1:1' },
      }),
    ).toThrow(/exclusive/);
  });

  it('takes ranges from exactly one source: a store or a DataSource', () => {
    expect(resolveLeafOptions({ segment: { store } }).segment?.allocation).toEqual({
      kind: 'store',
      store,
    });
    expect(() => resolveLeafOptions({ segment: { store, dataSource: {} as never } })).toThrow(
      /exclusive/,
    );
  });

  it('takes several databases as one list, exclusive with a single source, MySQL only', () => {
    const other = new InMemoryAllocStore();
    expect(
      resolveLeafOptions({ segment: { stores: [store, other], databaseTimeoutMs: 500 } }).segment
        ?.allocation,
    ).toEqual({
      kind: 'several',
      sources: [
        { name: 'store-0', store },
        { name: 'store-1', store: other },
      ],
      timeoutMs: 500,
    });
    const mysql = { options: { type: 'mysql', host: 'db1', port: 3307, database: 'leaf' } };
    expect(
      resolveLeafOptions({ segment: { dataSources: [mysql as never] } }).segment?.allocation,
    ).toMatchObject({ kind: 'several', sources: [{ name: 'db1:3307/leaf' }], timeoutMs: 1000 });
    expect(() =>
      resolveLeafOptions({
        segment: { dataSource: mysql as never, dataSources: [mysql as never] },
      }),
    ).toThrow(/`dataSource` and `dataSources` are exclusive/);
    expect(() => resolveLeafOptions({ segment: { stores: [] } })).toThrow(/non-empty list/);
    const sqlite = { options: { type: 'better-sqlite3' } };
    expect(() => resolveLeafOptions({ segment: { dataSources: [sqlite as never] } })).toThrow(
      /every database must be MySQL\/MariaDB/,
    );
    // Sequence mode's order argument needs one database (docs/design.md, "Sequence mode").
    expect(() =>
      resolveLeafOptions({
        segment: { stores: [store, other] },
        snowflake: false,
        sequence: { zookeeper: { connect: 'zk:2181' }, advertise: 'http://10.0.0.1:8080' },
      }),
    ).toThrow(/sequence mode needs one database/);
  });

  it('switches modes off with false or enabled: false', () => {
    expect(resolveLeafOptions({ segment: false, snowflake: { enabled: false } })).toMatchObject({
      segment: null,
      snowflake: null,
    });
  });

  it('lists every problem in one error', () => {
    let error: unknown;
    try {
      resolveLeafOptions({
        name: 'a/b',
        maxBatchSize: 0,
        segment: { maxStep: -1, preloadThreshold: 2 },
        snowflake: {
          zookeeper: { connect: '' },
          leaseMs: 100,
          heartbeatIntervalMs: 3000,
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LeafConfigurationError);
    const problems = (error as LeafConfigurationError).problems;
    expect(problems).toHaveLength(8);
    expect(problems.join('\n')).toMatch(/name/);
    expect(problems.join('\n')).toMatch(/dataSource/);
    expect(problems.join('\n')).toMatch(/zookeeper.connect/);
    expect(problems.join('\n')).toMatch(/advertise/);
    expect(() => resolveLeafOptions({ segment: false, snowflake: { workerId: 1024 } })).toThrow(
      /workerId/,
    );
    expect((error as LeafConfigurationError).code).toBe('LEAF_CONFIGURATION');
  });

  it('parses the advertised identity', () => {
    const options = resolveLeafOptions({
      segment: false,
      snowflake: { zookeeper: { connect: '127.0.0.1:2181' }, advertise: '10.0.0.7:8080' },
    });
    expect(options.snowflake?.workerSource).toEqual({
      kind: 'zookeeper',
      advertise: { ip: '10.0.0.7', port: 8080 },
      connect: '127.0.0.1:2181',
      sessionTimeoutMs: 10_000,
      connectTimeoutMs: 5000,
      reclaim: 'when-exhausted',
      reclaimMarginMs: 2000,
    });
  });

  it('takes a StatefulSet ordinal from the host name, with an offset', () => {
    const resolve = (ordinal: { hostname: string; offset?: number }) =>
      resolveLeafOptions({ segment: false, snowflake: { ordinal } }).snowflake?.workerSource;
    expect(resolve({ hostname: 'leaf-3.leaf.ids.svc.cluster.local' })).toEqual({
      kind: 'ordinal',
      hostname: 'leaf-3.leaf.ids.svc.cluster.local',
      offset: 0,
      workerId: 3,
      zookeeper: null,
    });
    expect(resolve({ hostname: 'leaf-3', offset: 100 })).toMatchObject({ workerId: 103 });
    expect(() => resolve({ hostname: 'leaf' })).toThrow(/does not end in "-<ordinal>"/);
    expect(() => resolve({ hostname: 'leaf-1020', offset: 10 })).toThrow(
      /beyond the largest worker ID 1023/,
    );
    expect(() =>
      resolveLeafOptions({
        segment: false,
        snowflake: { ordinal: { hostname: 'leaf-0' }, workerId: 1 },
      }),
    ).toThrow(/exclusive/);
  });

  it('resolves snowflake.region: the data-centre ID leased, its lease, and every problem at once', () => {
    const layout = { timestampBits: 41, dataCenterBits: 2, workerBits: 8, sequenceBits: 12 };
    const registry = new InMemoryRegionRegistry(new FakeClock());
    const resolve = (region: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      resolveLeafOptions({
        segment: false,
        snowflake: { workerId: 1, layout, region, ...extra } as never,
      }).snowflake;
    expect(resolve({ name: 'eu', dataCenterId: 3, store: registry })).toMatchObject({
      dataCenterId: 3,
      region: {
        region: 'eu',
        dataCenterId: 3,
        leaseMs: 14_400_000,
        renewIntervalMs: 300_000,
        marginMs: 60_000,
        callTimeoutMs: 5_000,
        registry: { kind: 'store', store: registry },
      },
    });
    expect(() => resolve({ store: registry })).toThrow(
      /snowflake\.region\.name is required[\s\S]*snowflake\.region\.dataCenterId is required/,
    );
    let problems: string[] = [];
    try {
      resolve(
        { name: 'e/u', dataCenterId: 4, leaseMs: 10_000, renewIntervalMs: 9_500, marginMs: 1_000 },
        { dataCenterId: 2 },
      );
    } catch (error) {
      problems = (error as LeafConfigurationError).problems as string[];
    }
    expect(problems).toEqual([
      expect.stringMatching(/^snowflake\.region\.name must be 1-64 characters/),
      'snowflake.region.dataCenterId must be an integer in 0..3 (got 4)',
      expect.stringMatching(
        /^snowflake\.dataCenterId \(2\) differs from snowflake\.region\.dataCenterId/,
      ),
      expect.stringMatching(/^snowflake\.region\.renewIntervalMs \(9500\) must be less than/),
      expect.stringMatching(/^snowflake\.region needs a MySQL\/MariaDB or PostgreSQL dataSource/),
    ]);
  });

  it('resolves layouts: named, split for data centres, and refuses bad ones', () => {
    const resolve = (snowflake: Record<string, unknown>) =>
      resolveLeafOptions({ segment: false, snowflake: { workerId: 1, ...snowflake } }).snowflake;
    expect(resolve({ layout: 'js-safe' })).toMatchObject({
      layout: { timestampBits: 40, workerBits: 7, sequenceBits: 6 },
      epoch: 1735689600000,
    });
    expect(
      resolve({
        layout: { timestampBits: 41, dataCenterBits: 3, workerBits: 7, sequenceBits: 12 },
        dataCenterId: 5,
      }),
    ).toMatchObject({ dataCenterId: 5, layout: { dataCenterBits: 3, workerBits: 7 } });
    expect(() =>
      resolve({ layout: { timestampBits: 45, workerBits: 10, sequenceBits: 12 } }),
    ).toThrow(/add up to 67/);
    expect(() => resolve({ layout: 'js-safe', workerId: 200 })).toThrow(
      /workerId must be an integer in 0\.\.127/,
    );
    expect(() =>
      resolve({
        layout: { timestampBits: 41, dataCenterBits: 2, workerBits: 8, sequenceBits: 12 },
        dataCenterId: 4,
      }),
    ).toThrow(/dataCenterId/);
    // Lifetime left: a 20-bit timestamp field from 2010 ran out long ago.
    expect(() =>
      resolve({ layout: { timestampBits: 20, workerBits: 10, sequenceBits: 12 } }),
    ).toThrow(/ran out/);
  });

  it('snowflake worker IDs leased from the database: by default with a MySQL/PostgreSQL segment DataSource', () => {
    const db = (type: string) => ({ options: { type } }) as never;
    const source = (raw: Parameters<typeof resolveLeafOptions>[0]) =>
      resolveLeafOptions(raw).snowflake!.workerSource;
    expect(source({ segment: { dataSource: db('mysql') }, snowflake: {} })).toMatchObject({
      kind: 'database',
      marginMs: 1000,
      callTimeoutMs: 2000,
      store: { description: 'MySQL/MariaDB leaf_worker_lease' },
    });
    expect(
      source({
        segment: { dataSource: db('postgres') },
        snowflake: { advertise: '10.0.0.5:8080', database: { marginMs: 500 } },
      }),
    ).toMatchObject({ kind: 'database', holder: '10.0.0.5:8080', marginMs: 500 });
    // Another source given wins; `database: false` turns the default off.
    expect(source({ segment: { dataSource: db('mysql') }, snowflake: { workerId: 4 } })).toEqual({
      kind: 'embedded',
      workerId: 4,
    });
    expect(() =>
      resolveLeafOptions({ segment: { dataSource: db('mysql') }, snowflake: { database: false } }),
    ).toThrow(/needs a worker-ID source/);
    // SQLite serves one process: no default, and asking for it is refused.
    expect(() =>
      resolveLeafOptions({ segment: { dataSource: db('better-sqlite3') }, snowflake: {} }),
    ).toThrow(/needs a worker-ID source/);
    expect(() =>
      resolveLeafOptions({
        segment: { dataSource: db('better-sqlite3') },
        snowflake: { database: true },
      }),
    ).toThrow(/leased from MySQL\/MariaDB or PostgreSQL/);
    expect(() =>
      resolveLeafOptions({ segment: { store }, snowflake: { database: true, workerId: 1 } }),
    ).toThrow(/exclusive/);
    // The margin must leave the lease alive between two renewals.
    expect(() =>
      resolveLeafOptions({
        segment: { dataSource: db('mysql') },
        snowflake: { leaseMs: 3000, heartbeatIntervalMs: 1000, database: { marginMs: 2000 } },
      }),
    ).toThrow(/marginMs \(2000\) must be less than/);
  });
});
