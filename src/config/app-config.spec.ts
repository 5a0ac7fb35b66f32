import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SNOWFLAKE_EPOCH, LeafConfigurationError } from 'nestjs-leaf';
import {
  LEAF_OPTION_RULES,
  SNOWFLAKE_LAYOUTS,
  resolveLeafOptions,
  type LeafOptionPath,
  type ResolvedLeafOptions,
} from 'nestjs-leaf/server';
import type { DataSource } from 'typeorm';
import { loadAppConfig } from './app-config';
import { APP_DEFAULT_DIFFERENCES, APP_ENV } from './app-env';
import { effectiveLeafOptions, toLeafOptions } from './leaf-options.mapping';

/** Stands in for the app's DataSource: the resolver only keeps it. */
const dataSource = { isInitialized: true } as unknown as DataSource;

/**
 * The value `resolved` holds for the option at `path`, and what the library's rule says it is
 * when left unset. Every option of LEAF_OPTION_RULES must be listed: a new one fails here
 * until its effective value is checked.
 */
function effective(
  resolved: ResolvedLeafOptions,
  path: LeafOptionPath,
): { actual: unknown; expected: unknown } | 'not-applicable' {
  const rule = LEAF_OPTION_RULES[path];
  const segment = resolved.segment!;
  const snowflake = resolved.snowflake!;
  const zk = snowflake.workerSource.kind === 'zookeeper' ? snowflake.workerSource : null;
  const [scope, key, sub] = path.split('.') as [string, string | undefined, string | undefined];
  // Sequence mode is off unless LEAF_SEQUENCE_ENABLED: its options apply only then (below).
  if (scope === 'sequence') return 'not-applicable';
  // Gapless series likewise, unless LEAF_GAPLESS (their resolver: gapless-options.spec.ts).
  if (scope === 'gapless') return 'not-applicable';
  switch (path) {
    case 'segment.maxRangeCount':
      // Derived: the largest dynamic step.
      return { actual: segment.maxRangeCount, expected: segment.maxStep };
    case 'snowflake.layout':
      return { actual: snowflake.layout, expected: SNOWFLAKE_LAYOUTS[rule.default as 'leaf'] };
    case 'snowflake.epoch':
      return { actual: snowflake.epoch, expected: DEFAULT_SNOWFLAKE_EPOCH };
    case 'snowflake.workerId':
    case 'snowflake.advertise':
    case 'snowflake.zookeeper.connect':
    case 'snowflake.ordinal.offset':
    case 'segment.highWater.connect':
    case 'segment.highWater.sessionTimeoutMs':
    case 'segment.highWater.callTimeoutMs':
    case 'journal':
    case 'instance':
    case 'opaque.keys':
      // The journal: the app's deliberate difference (tested above). Opaque keys: none.
      // No library default (a worker-ID source is the operator's choice); see the tests below.
      return 'not-applicable';
  }
  if (scope === 'segment')
    return { actual: segment[key as keyof typeof segment], expected: rule.default };
  if (scope === 'snowflake' && key === 'database') {
    const db = snowflake.workerSource.kind === 'database' ? snowflake.workerSource : null;
    if (!db) return 'not-applicable';
    return { actual: db[sub as keyof typeof db], expected: rule.default };
  }
  if (scope === 'snowflake' && key === 'region') {
    // No region registry unless LEAF_REGION is set (tested in region-config.spec.ts).
    if (!snowflake.region) return 'not-applicable';
    return {
      actual: snowflake.region[sub as keyof typeof snowflake.region],
      expected: rule.default,
    };
  }
  if (scope === 'snowflake' && key === 'zookeeper') {
    if (!zk) return 'not-applicable';
    return { actual: zk[sub as keyof typeof zk], expected: rule.default };
  }
  if (scope === 'snowflake')
    return { actual: snowflake[key as keyof typeof snowflake], expected: rule.default };
  return { actual: resolved[scope as keyof ResolvedLeafOptions], expected: rule.default };
}

/** The least a region needs (docs/operations.md, "Regions"). */
const REGION_ENV = {
  LEAF_DB_URL: 'postgres://leaf@db:5432/leaf',
  LEAF_REGION: 'eu-west',
  LEAF_REGION_DB_URL: 'postgres://leaf@registry:5432/regions',
  LEAF_REGION_DATA_CENTER_ID: '1',
  LEAF_SNOWFLAKE_DATA_CENTER_BITS: '2',
};

function expectLibraryDefaults(resolved: ResolvedLeafOptions): number {
  let checked = 0;
  for (const path of Object.keys(LEAF_OPTION_RULES) as LeafOptionPath[]) {
    const found = effective(resolved, path);
    if (found === 'not-applicable') continue;
    expect([path, found.actual]).toEqual([path, found.expected]);
    checked += 1;
  }
  return checked;
}

describe('the application’s configuration against the library’s defaults', () => {
  it('an empty environment passes on only the documented deliberate differences', () => {
    const options = toLeafOptions(loadAppConfig({}), { dataSource });
    expect(options).toEqual({
      segment: { dataSource },
      snowflake: { workerId: 0 },
      journal: true,
      instance: `${hostname()}:8080`,
    });
    // Each of those is in APP_DEFAULT_DIFFERENCES.
    const documented = APP_DEFAULT_DIFFERENCES.map((d) => d.option);
    expect(documented).toEqual(
      expect.arrayContaining(['segment.dataSource', 'snowflake.workerId', 'journal', 'instance']),
    );
  });

  it('an empty environment runs the library with its defaults, field by field', () => {
    const resolved = resolveLeafOptions(toLeafOptions(loadAppConfig({}), { dataSource }));
    expect(resolved.snowflake!.workerSource).toEqual({ kind: 'embedded', workerId: 0 });
    expect(expectLibraryDefaults(resolved)).toBeGreaterThanOrEqual(20);
  });

  it('with only LEAF_ZK_ADDRESS: ZooKeeper with the library’s defaults (reclaim when-exhausted), and the derived advertise address', () => {
    const config = loadAppConfig({ LEAF_ZK_ADDRESS: 'zk:2181', PORT: '9000' });
    const options = toLeafOptions(config, { dataSource });
    expect(options.snowflake).toEqual({
      zookeeper: { connect: 'zk:2181' },
      advertise: expect.stringMatching(/^[0-9.]+:9000$/),
    });
    const resolved = resolveLeafOptions(options);
    const source = resolved.snowflake!.workerSource;
    expect(source).toMatchObject({ kind: 'zookeeper', reclaim: 'when-exhausted' });
    expectLibraryDefaults(resolved);
  });

  it('a variable that is set is passed on as its library option, and nothing else', () => {
    for (const variable of APP_ENV) {
      if (!('option' in variable)) continue;
      const rule = LEAF_OPTION_RULES[variable.option];
      const sample: Record<string, string> = {
        integer: String(rule.type === 'integer' ? Math.min(rule.max, Math.max(rule.min, 7)) : 7),
        boolean: 'false',
        enum: 'values' in rule ? rule.values[rule.values.length - 1] : '',
        list:
          variable.name === 'LEAF_CLUSTER_SECRET'
            ? `${'a'.repeat(32)},${'b'.repeat(32)}`
            : variable.name === 'LEAF_OPAQUE_KEYS'
              ? `v1:${'A'.repeat(22)}==,v2:${'B'.repeat(22)}==`
              : 'a,b',
        string:
          variable.option === 'name'
            ? 'other-name'
            : variable.name === 'LEAF_SNOWFLAKE_ADVERTISE'
              ? '10.0.0.1:80'
              : variable.name === 'LEAF_SEQUENCE_ADVERTISE'
                ? 'http://10.0.0.1:80'
                : variable.name === 'LEAF_REGION'
                  ? 'eu-west'
                  : 'x:1',
      };
      const env = { [variable.name]: sample[rule.type]! };
      if (variable.name.startsWith('LEAF_REGION')) {
        // A region comes with its registry and data-centre ID, or not at all.
        const region = loadAppConfig({ ...REGION_ENV, ...env }).options;
        // (and the advertised identity of the worker leases in LEAF_DB_URL)
        expect(
          Object.keys(region).filter(
            (o) => !o.startsWith('snowflake.region.') && o !== 'snowflake.advertise',
          ),
        ).toEqual([]);
        expect(region).toHaveProperty([variable.option]);
        continue;
      }
      const config = loadAppConfig(env);
      expect([variable.name, Object.keys(config.options)]).toEqual(
        variable.name === 'LEAF_ZK_ADDRESS'
          ? [variable.name, ['snowflake.zookeeper.connect', 'snowflake.advertise']]
          : variable.name === 'LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS' ||
              variable.name === 'LEAF_SNOWFLAKE_LEASE_MARGIN_MS'
            ? [variable.name, []] // the mark's / the database lease's own setting; off here (below)
            : [variable.name, [variable.option]],
      );
    }
  });

  it('LEAF_COORDINATION: zookeeper with LEAF_ZK_ADDRESS, else database with a MySQL/PostgreSQL LEAF_DB_URL, else none', () => {
    const pg = { LEAF_DB_URL: 'postgres://leaf@db:5432/leaf', PORT: '9000' };
    const onDb = loadAppConfig({
      ...pg,
      NODE_ENV: 'production',
      LEAF_SNOWFLAKE_LEASE_MARGIN_MS: '700',
    });
    expect(onDb.coordination).toBe('database');
    expect(onDb.snowflake.workerSource).toBe('database');
    expect(onDb.options['snowflake.database.marginMs']).toBe(700);
    const mapped = toLeafOptions(onDb, { dataSource });
    expect(mapped.snowflake).toMatchObject({
      database: { dataSource, marginMs: 700 },
      advertise: expect.stringMatching(/:9000$/),
    });
    // MySQL too; ZooKeeper wins when set; an explicit worker ID wins over the database.
    expect(loadAppConfig({ LEAF_DB_URL: 'mysql://leaf@db/leaf' }).coordination).toBe('database');
    const zk = loadAppConfig({ ...pg, LEAF_ZK_ADDRESS: 'zk:2181' });
    expect([zk.coordination, zk.snowflake.workerSource]).toEqual(['zookeeper', 'zookeeper']);
    const explicit = loadAppConfig({ ...pg, LEAF_WORKER_ID: '7' });
    expect([explicit.coordination, explicit.snowflake.workerSource]).toEqual([
      'database',
      'explicit',
    ]);
    expect(toLeafOptions(explicit, { dataSource }).snowflake).not.toHaveProperty('database');
    // Chosen explicitly: database with ZooKeeper set assigns worker IDs from the database.
    const chosen = loadAppConfig({
      ...pg,
      LEAF_ZK_ADDRESS: 'zk:2181',
      LEAF_COORDINATION: 'database',
    });
    expect(chosen.snowflake.workerSource).toBe('database');
    expect(chosen.options).not.toHaveProperty(['snowflake.zookeeper.connect']);
    // SQLite and several databases coordinate nothing; asking for it is refused.
    expect(loadAppConfig({}).coordination).toBeNull();
    expect(() => loadAppConfig({ LEAF_COORDINATION: 'database' })).toThrow(
      /SQLite serves one process/,
    );
    expect(() => loadAppConfig({ LEAF_COORDINATION: 'zookeeper' })).toThrow(
      /needs LEAF_ZK_ADDRESS/,
    );
    expect(() => loadAppConfig({ LEAF_COORDINATION: 'etcd' })).toThrow(/LEAF_COORDINATION must be/);
  });

  /** MySQL allocations and ZooKeeper: the base of the high-water tests. */
  const mysqlAndZk = { LEAF_DB_URL: 'mysql://leaf@db:3306/leaf', LEAF_ZK_ADDRESS: 'zk:2181' };

  it('LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS is passed on with the mark, left out without it', () => {
    const on = loadAppConfig({ ...mysqlAndZk, LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS: '500' });
    expect(on.options).toMatchObject({
      'segment.highWater.connect': 'zk:2181',
      'segment.highWater.callTimeoutMs': 500,
    });
    const off = loadAppConfig({
      ...mysqlAndZk,
      LEAF_SEGMENT_HIGH_WATER_ZK: 'off',
      LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS: '500',
    });
    expect(Object.keys(off.options)).not.toContain('segment.highWater.callTimeoutMs');
    expect(() =>
      loadAppConfig({ ...mysqlAndZk, LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS: '50' }),
    ).toThrow(
      /LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS must be an integer in 100\.\.60000 \(option segment\.highWater\.callTimeoutMs\)/,
    );
  });

  it('LEAF_SEGMENT_HIGH_WATER_DB_URL: the mark in that database instead of ZooKeeper, with its call timeout; exclusive with LEAF_SEGMENT_HIGH_WATER_ZK; refused on the allocation database', () => {
    const env = {
      ...mysqlAndZk,
      LEAF_SEGMENT_HIGH_WATER_DB_URL: 'postgres://leaf@marks:5432/marks',
      LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS: '500',
    };
    const config = loadAppConfig(env);
    expect(config.segment.highWater).toEqual({
      type: 'postgres',
      url: 'postgres://leaf@marks:5432/marks',
    });
    expect(config.options).toMatchObject({ 'segment.highWater.callTimeoutMs': 500 });
    expect(Object.keys(config.options)).not.toContain('segment.highWater.connect');
    const marks = { options: { type: 'postgres' } } as unknown as DataSource;
    const db = { options: { type: 'mysql' } } as unknown as DataSource;
    expect(toLeafOptions(config, { dataSource: db, highWater: marks }).segment).toMatchObject({
      dataSource: db,
      highWater: { dataSource: marks, callTimeoutMs: 500 },
    });
    expect(() => loadAppConfig({ ...env, LEAF_SEGMENT_HIGH_WATER_ZK: 'zk:2181' })).toThrow(
      /LEAF_SEGMENT_HIGH_WATER_DB_URL and LEAF_SEGMENT_HIGH_WATER_ZK are exclusive/,
    );
    expect(() =>
      loadAppConfig({ ...env, LEAF_SEGMENT_HIGH_WATER_DB_URL: 'mysql://marks@DB/leaf' }),
    ).toThrow(/LEAF_SEGMENT_HIGH_WATER_DB_URL names the allocation database of LEAF_DB_URL/);
    expect(() =>
      loadAppConfig({ LEAF_SEGMENT_HIGH_WATER_DB_URL: 'mysql://marks@db:3306/marks' }),
    ).toThrow(/LEAF_SEGMENT_HIGH_WATER_DB_URL needs a database server in LEAF_DB_URL/);
  });

  it('LEAF_SEQUENCE_ENABLED: the library’s sequence defaults; a database and ZooKeeper required, and an advertise address with PORT=0', () => {
    const config = loadAppConfig({
      LEAF_SEQUENCE_ENABLED: 'true',
      LEAF_ZK_ADDRESS: 'zk:2181',
      PORT: '9000',
    });
    const options = toLeafOptions(config, { dataSource });
    expect(options.sequence).toEqual({
      zookeeper: { connect: 'zk:2181' },
      advertise: expect.stringMatching(/^http:\/\/[0-9.]+:9000$/),
    });
    const sequence = resolveLeafOptions(options).sequence!;
    for (const path of Object.keys(LEAF_OPTION_RULES) as LeafOptionPath[]) {
      const [scope, key, sub] = path.split('.');
      if (scope !== 'sequence' || key === 'advertise' || key === 'database' || sub === 'connect')
        continue;
      const field = (sub ?? key) as keyof typeof sequence;
      expect([path, sequence[field]]).toEqual([path, LEAF_OPTION_RULES[path].default]);
    }
    expect(
      toLeafOptions(
        loadAppConfig({ LEAF_SEQUENCE_ZK: 'other:2181', LEAF_SEQUENCE_ENABLED: 'yes' }),
        { dataSource },
      ).sequence,
    ).toMatchObject({ zookeeper: { connect: 'other:2181' } });
    // Gapless series: in one database server, the one segment mode opens.
    const gapless = /LEAF_GAPLESS=true needs LEAF_SEGMENT_ENABLED=true with one database server/;
    expect(() => loadAppConfig({ LEAF_GAPLESS: 'true' })).toThrow(gapless);
    const server = { LEAF_GAPLESS: 'true', LEAF_DB_URL: 'postgres://leaf@db:5432/leaf' };
    expect(loadAppConfig(server).gapless).toEqual({ enabled: true });
    expect(toLeafOptions(loadAppConfig(server), { dataSource }).gapless).toEqual({ dataSource });
    expect(toLeafOptions(loadAppConfig({}), { dataSource }).gapless).toBeUndefined();
    expect(() => loadAppConfig({ ...server, LEAF_SEGMENT_ENABLED: 'false' })).toThrow(gapless);
    // The embedded SQLite holds no election: ZooKeeper, or MySQL/MariaDB or PostgreSQL.
    expect(() => loadAppConfig({ LEAF_SEQUENCE_ENABLED: 'true' })).toThrow(
      /LEAF_SEQUENCE_ENABLED=true needs an issuer election: ZooKeeper .*SQLite serves one process/,
    );
    // Segment mode off: sequence mode takes its ranges from LEAF_DB_URL itself, and elects
    // its issuers there by default.
    const alone = loadAppConfig({
      LEAF_SEQUENCE_ENABLED: 'true',
      LEAF_SEGMENT_ENABLED: 'false',
      LEAF_DB_URL: 'postgres://leaf@db:5432/leaf',
    });
    expect(alone.coordination).toBe('database');
    expect(toLeafOptions(alone, { dataSource })).toMatchObject({
      segment: false,
      sequence: { dataSource, coordination: 'database' },
    });
    expect(() =>
      loadAppConfig({ LEAF_SEGMENT_ENABLED: 'false', LEAF_COORDINATION: 'database' }),
    ).toThrow(/LEAF_COORDINATION=database needs a database: LEAF_SEGMENT_ENABLED=true or/);
    expect(() =>
      loadAppConfig({ LEAF_SEQUENCE_ENABLED: 'true', LEAF_ZK_ADDRESS: 'zk:2181', PORT: '0' }),
    ).toThrow(/PORT=0: set LEAF_SEQUENCE_ADVERTISE/);
    expect(() =>
      loadAppConfig({
        LEAF_SEQUENCE_ENABLED: 'true',
        LEAF_ZK_ADDRESS: 'zk:2181',
        LEAF_DB_URLS: 'mysql://leaf@db1:3306/leaf,mysql://leaf@db2:3306/leaf',
      }),
    ).toThrow(
      /LEAF_SEQUENCE_ENABLED=true needs .*one database.*a new issuer’s first range is above only/,
    );
  });

  it('LEAF_COORDINATION: ZooKeeper when one is set, else the database on MySQL/MariaDB or PostgreSQL; each refuses the other’s settings', () => {
    const sequence = (env: NodeJS.ProcessEnv) => {
      const config = loadAppConfig({ LEAF_SEQUENCE_ENABLED: 'true', PORT: '9000', ...env });
      return {
        coordination: config.coordination,
        options: toLeafOptions(config, { dataSource }).sequence,
      };
    };
    for (const url of [
      'postgres://leaf@db:5432/leaf',
      'mysql://leaf@db:3306/leaf',
      'mariadb://leaf@db/leaf',
    ]) {
      expect(sequence({ LEAF_DB_URL: url })).toEqual({
        coordination: 'database',
        options: { coordination: 'database', advertise: expect.any(String) },
      });
    }
    expect(
      sequence({ LEAF_DB_URL: 'postgres://leaf@db:5432/leaf', LEAF_SEQUENCE_LEASE_MS: '6000' })
        .options,
    ).toMatchObject({ coordination: 'database', database: { leaseMs: 6000 } });
    expect(
      sequence({ LEAF_DB_URL: 'postgres://leaf@db:5432/leaf', LEAF_ZK_ADDRESS: 'zk:2181' }),
    ).toMatchObject({ coordination: 'zookeeper', options: { zookeeper: { connect: 'zk:2181' } } });
    // Explicit: the database even with a ZooKeeper configured (for snowflake, say).
    expect(
      sequence({
        LEAF_DB_URL: 'postgres://leaf@db:5432/leaf',
        LEAF_ZK_ADDRESS: 'zk:2181',
        LEAF_COORDINATION: 'database',
      }).options,
    ).toEqual({ coordination: 'database', advertise: expect.any(String) });
    expect(() => sequence({ LEAF_COORDINATION: 'database' })).toThrow(
      /LEAF_COORDINATION=database needs LEAF_DB_URL=mysql:\/\/… or postgres:\/\/…/,
    );
    expect(() =>
      sequence({ LEAF_DB_URL: 'mysql://leaf@db/leaf', LEAF_COORDINATION: 'zookeeper' }),
    ).toThrow(/LEAF_COORDINATION=zookeeper needs ZooKeeper/);
    expect(() =>
      sequence({ LEAF_DB_URL: 'mysql://leaf@db/leaf', LEAF_SEQUENCE_SESSION_TIMEOUT_MS: '9000' }),
    ).toThrow(/LEAF_SEQUENCE_SESSION_TIMEOUT_MS is ZooKeeper's/);
    expect(() => sequence({ LEAF_ZK_ADDRESS: 'zk:2181', LEAF_SEQUENCE_LEASE_MS: '9000' })).toThrow(
      /LEAF_SEQUENCE_LEASE_MS is the database election's/,
    );
    expect(() => sequence({ LEAF_COORDINATION: 'etcd' })).toThrow(/LEAF_COORDINATION must be/);
  });

  it('LEAF_SEQUENCE_ENABLED: the advertised address follows HOST when it names one address', () => {
    const advertise = (env: Record<string, string>) =>
      (
        toLeafOptions(
          loadAppConfig({ LEAF_SEQUENCE_ENABLED: 'true', LEAF_ZK_ADDRESS: 'zk:2181', ...env }),
          { dataSource },
        ).sequence as { advertise: string }
      ).advertise;
    expect(advertise({ HOST: '127.0.0.1', PORT: '9000' })).toBe('http://127.0.0.1:9000');
    expect(advertise({ HOST: 'leaf-0.leaf', PORT: '9000' })).toBe('http://leaf-0.leaf:9000');
    expect(advertise({ HOST: '::1', PORT: '9000' })).toBe('http://[::1]:9000');
    expect(advertise({ HOST: '0.0.0.0', PORT: '9000' })).toMatch(/^http:\/\/[0-9.]+:9000$/);
    expect(advertise({ HOST: '::', PORT: '9000' })).toMatch(/^http:\/\/[0-9.]+:9000$/);
    expect(
      advertise({ HOST: '127.0.0.1', LEAF_SEQUENCE_ADVERTISE: 'http://leaf.example:80' }),
    ).toBe('http://leaf.example:80');
  });

  it('LEAF_SEQUENCE_ENABLED with MySQL: the high-water mark on the election’s ZooKeeper unless another or off is set', () => {
    const mysql = { LEAF_DB_URL: 'mysql://leaf@db:3306/leaf' };
    const highWater = (env: Record<string, string>) =>
      loadAppConfig({ ...mysql, LEAF_SEQUENCE_ENABLED: 'true', ...env }).options[
        'segment.highWater.connect'
      ];
    expect(highWater({ LEAF_SEQUENCE_ZK: 'seq:2181' })).toBe('seq:2181');
    expect(highWater({ LEAF_SEQUENCE_ZK: 'seq:2181', LEAF_ZK_ADDRESS: 'zk:2181' })).toBe('zk:2181');
    expect(
      highWater({ LEAF_SEQUENCE_ZK: 'seq:2181', LEAF_SEGMENT_HIGH_WATER_ZK: 'off' }),
    ).toBeUndefined();
    // Segment mode alone, no ZooKeeper at all: no mark (as before).
    expect(loadAppConfig(mysql).options['segment.highWater.connect']).toBeUndefined();
  });

  it('checks a set variable against the library’s rule, naming the variable and the option', () => {
    expect(() => loadAppConfig({ LEAF_MAX_BATCH: '1000001' })).toThrow(
      /LEAF_MAX_BATCH must be an integer in 1\.\.1000000 \(option maxBatchSize\) \(got "1000001"\)/,
    );
    // The library's limit, not a second one of the app's.
    expect(loadAppConfig({ LEAF_MAX_BATCH: '1000000' }).options.maxBatchSize).toBe(1_000_000);
    expect(() => loadAppConfig({ LEAF_NAME: 'a/b' })).toThrow(/LEAF_NAME must be 1-64 characters/);
    expect(() => loadAppConfig({ LEAF_NAME: 'a'.repeat(65) })).toThrow(/LEAF_NAME/);
    expect(() => loadAppConfig({ LEAF_SNOWFLAKE_RECLAIM: 'sometimes' })).toThrow(
      /LEAF_SNOWFLAKE_RECLAIM must be one of never, when-exhausted, always/,
    );
    expect(() => loadAppConfig({ LEAF_ACCESS_LOG: 'maybe' })).toThrow(
      /LEAF_ACCESS_LOG must be true or false/,
    );
  });

  it('LEAF_CLUSTER_SECRET or LEAF_CLUSTER_SECRET_FILE: the secrets to sequence.clusterSecret (new,old in a rotation), never echoed', () => {
    const [fresh, old] = ['n'.repeat(40), 'o'.repeat(40)];
    const sequence = {
      LEAF_SEQUENCE_ENABLED: 'true',
      LEAF_DB_URL: 'postgres://leaf@db:5432/leaf',
      LEAF_SNOWFLAKE_ENABLED: 'false',
      PORT: '9000',
    };
    const secretOf = (env: NodeJS.ProcessEnv) => {
      const postgres = { options: { type: 'postgres' } } as unknown as DataSource;
      const options = toLeafOptions(loadAppConfig({ ...sequence, ...env }), {
        dataSource: postgres,
      });
      return resolveLeafOptions(options).sequence!.clusterSecret;
    };
    expect(secretOf({})).toEqual([]);
    expect(secretOf({ LEAF_CLUSTER_SECRET: fresh })).toEqual([fresh]);
    expect(secretOf({ LEAF_CLUSTER_SECRET: ` ${fresh} , ${old} ` })).toEqual([fresh, old]);
    const dir = mkdtempSync(join(tmpdir(), 'leaf-secret-'));
    try {
      const file = join(dir, 'cluster-secret');
      writeFileSync(file, `${fresh}\n${old}\n`);
      expect(secretOf({ LEAF_CLUSTER_SECRET_FILE: file })).toEqual([fresh, old]);
      writeFileSync(file, `${fresh},${old}`);
      expect(secretOf({ LEAF_CLUSTER_SECRET_FILE: file })).toEqual([fresh, old]);
      expect(() =>
        loadAppConfig({ LEAF_CLUSTER_SECRET: fresh, LEAF_CLUSTER_SECRET_FILE: file }),
      ).toThrow(/LEAF_CLUSTER_SECRET and LEAF_CLUSTER_SECRET_FILE are exclusive/);
      writeFileSync(file, 'too-short-secret\n');
      expect(() => loadAppConfig({ LEAF_CLUSTER_SECRET_FILE: file })).toThrow(
        /LEAF_CLUSTER_SECRET_FILE must hold 1 or 2 secrets of at least 32 characters/,
      );
      expect(() => loadAppConfig({ LEAF_CLUSTER_SECRET_FILE: file })).not.toThrow(/too-short/);
      expect(() => loadAppConfig({ LEAF_CLUSTER_SECRET_FILE: join(dir, 'none') })).toThrow(
        /LEAF_CLUSTER_SECRET_FILE: cannot read .*none \(ENOENT\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    for (const bad of [
      'too-short-secret',
      `${fresh},too-short-secret`,
      `${fresh},${old},${fresh}`,
      ',',
    ]) {
      expect(() => loadAppConfig({ LEAF_CLUSTER_SECRET: bad })).toThrow(
        /LEAF_CLUSTER_SECRET must be 1 or 2 secrets of at least 32 characters/,
      );
      expect(() => loadAppConfig({ LEAF_CLUSTER_SECRET: bad })).not.toThrow(/too-short|nnnn/);
    }
  });

  it('LEAF_OPAQUE_KEYS or its file: the key ring to opaque.keys, each key a secret of the logs, never echoed', () => {
    const k1 = Buffer.alloc(16, 1).toString('base64');
    const k2 = Buffer.alloc(32, 2).toString('base64');
    const ringOf = (env: NodeJS.ProcessEnv) =>
      resolveLeafOptions(toLeafOptions(loadAppConfig(env))).opaque;
    expect(ringOf({})).toBeNull();
    const config = loadAppConfig({ LEAF_OPAQUE_KEYS: `v1:${k1}, v2:${k2}` });
    expect(config.log.secrets).toEqual(expect.arrayContaining([k1, k2, `v1:${k1}`]));
    expect(ringOf({ LEAF_OPAQUE_KEYS: `v1:${k1},v2:${k2}` })).toMatchObject({ current: 2 });
    const dir = mkdtempSync(join(tmpdir(), 'leaf-opaque-'));
    try {
      const file = join(dir, 'opaque-keys');
      writeFileSync(file, `v2:${k2}\nv1:${k1}\n`);
      expect(ringOf({ LEAF_OPAQUE_KEYS_FILE: file })).toMatchObject({ current: 1 });
      expect(loadAppConfig({ LEAF_OPAQUE_KEYS_FILE: file }).log.secrets).toContain(k2);
      expect(() =>
        loadAppConfig({ LEAF_OPAQUE_KEYS: `v1:${k1}`, LEAF_OPAQUE_KEYS_FILE: file }),
      ).toThrow(/LEAF_OPAQUE_KEYS and LEAF_OPAQUE_KEYS_FILE are exclusive/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const short = Buffer.alloc(10, 3).toString('base64');
    for (const [bad, problem] of [
      [`v1:${k1},v1:${k2}`, /LEAF_OPAQUE_KEYS: opaque key version 1 is listed twice/],
      [`v1:${short}`, /LEAF_OPAQUE_KEYS: opaque key 1: an AES key is 16, 24 or 32 bytes/],
      [k1, /LEAF_OPAQUE_KEYS: opaque.keys item 1 must be `v<1-52>:<base64/],
    ] as const) {
      expect(() => loadAppConfig({ LEAF_OPAQUE_KEYS: bad })).toThrow(problem);
      expect(() => loadAppConfig({ LEAF_OPAQUE_KEYS: bad })).not.toThrow(k1.slice(0, 12));
    }
  });

  it('NODE_ENV=production with LEAF_SEQUENCE_ENABLED refuses to start without a cluster secret, saying how to set one', () => {
    const production = {
      NODE_ENV: 'production',
      LEAF_SEQUENCE_ENABLED: 'true',
      LEAF_DB_URL: 'postgres://leaf@db:5432/leaf',
      PORT: '9000',
    };
    expect(() => loadAppConfig(production)).toThrow(LeafConfigurationError);
    expect(() => loadAppConfig(production)).toThrow(
      expect.objectContaining({
        problems: [
          expect.stringMatching(
            /^NODE_ENV=production with LEAF_SEQUENCE_ENABLED=true needs a cluster secret.*set LEAF_CLUSTER_SECRET \(at least 32 characters, the same on every instance.*or LEAF_CLUSTER_SECRET_FILE.*or serve the internal routes with mutual TLS \(LEAF_INTERNAL_PORT/,
          ),
        ],
      }),
    );
    expect(
      loadAppConfig({ ...production, LEAF_CLUSTER_SECRET: 's'.repeat(32) }).options,
    ).toMatchObject({
      'sequence.clusterSecret': ['s'.repeat(32)],
    });
    // Not in production, or without sequence mode: no secret needed (a warning at start).
    const { NODE_ENV: _, ...development } = production;
    expect(() => loadAppConfig(development)).not.toThrow();
    expect(() => loadAppConfig({ ...production, LEAF_SEQUENCE_ENABLED: 'false' })).not.toThrow();
  });

  it('LEAF_INTERNAL_PORT with its three PEM files: the internal listener, an https advertise address, the client certificate to the library; in production instead of a secret', () => {
    const dir = mkdtempSync(join(tmpdir(), 'leaf-internal-'));
    try {
      const files = {
        LEAF_INTERNAL_TLS_CERT: 'cert',
        LEAF_INTERNAL_TLS_KEY: 'key',
        LEAF_INTERNAL_TLS_CA: 'ca',
      };
      const env: Record<string, string> = {
        NODE_ENV: 'production',
        LEAF_DB_URL: 'postgres://leaf@db:5432/leaf',
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_SEQUENCE_ENABLED: 'true',
        HOST: '10.0.0.7',
        PORT: '8080',
        LEAF_INTERNAL_PORT: '8443',
      };
      for (const [name, part] of Object.entries(files)) {
        env[name] = join(dir, `${part}.pem`);
        writeFileSync(env[name]!, `-----BEGIN ${part}-----\n`);
      }
      const config = loadAppConfig(env);
      expect(config.internal).toMatchObject({ port: 8443, host: '10.0.0.7' });
      expect(config.internal!.tls.ca.toString()).toBe('-----BEGIN ca-----\n');
      const postgres = { options: { type: 'postgres' } } as unknown as DataSource;
      expect(toLeafOptions(config, { dataSource: postgres }).sequence).toMatchObject({
        advertise: 'https://10.0.0.7:8443',
        tls: config.internal!.tls,
      });
      expect(
        resolveLeafOptions(toLeafOptions(config, { dataSource: postgres })).sequence!.tls,
      ).toBe(config.internal!.tls);
      expect(() =>
        loadAppConfig({ ...env, LEAF_SEQUENCE_ADVERTISE: 'http://10.0.0.7:8443' }),
      ).toThrow(/LEAF_SEQUENCE_ADVERTISE must be https:\/\/host:LEAF_INTERNAL_PORT/);
      const { LEAF_INTERNAL_TLS_CA: _, ...partial } = env;
      expect(() => loadAppConfig(partial)).toThrow(
        /LEAF_INTERNAL_PORT, LEAF_INTERNAL_TLS_CERT, LEAF_INTERNAL_TLS_KEY and LEAF_INTERNAL_TLS_CA go together: LEAF_INTERNAL_TLS_CA missing/,
      );
      expect(() => loadAppConfig({ ...env, LEAF_INTERNAL_TLS_KEY: join(dir, 'none.pem') })).toThrow(
        /LEAF_INTERNAL_TLS_KEY: cannot read .*none\.pem \(ENOENT\)/,
      );
      expect(() => loadAppConfig({ ...env, LEAF_INTERNAL_PORT: '8080' })).toThrow(
        /LEAF_INTERNAL_PORT must differ from PORT/,
      );
      expect(() => loadAppConfig({ ...env, LEAF_SEQUENCE_ENABLED: 'false' })).toThrow(
        /LEAF_INTERNAL_PORT serves the internal routes of sequence mode/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a blank variable is not set', () => {
    expect(loadAppConfig({ LEAF_MAX_BATCH: '  ', LEAF_SNOWFLAKE_RECLAIM: '' }).options).toEqual({});
  });

  it('never echoes the admin token in a problem', () => {
    expect(() => loadAppConfig({ LEAF_ADMIN_TOKEN: 'short-secret' })).toThrow(
      /LEAF_ADMIN_TOKEN must be at least 16 characters$/m,
    );
    expect(() => loadAppConfig({ LEAF_ADMIN_TOKEN: 'short-secret' })).not.toThrow(/short-secret/);
  });

  it('a StatefulSet ordinal passes the ordinal source with only the offset that was set', () => {
    const plain = toLeafOptions(loadAppConfig({ LEAF_WORKER_ID_FROM_HOSTNAME: 'true' }));
    expect(plain.snowflake).toEqual({ ordinal: true });
    const offset = toLeafOptions(
      loadAppConfig({ LEAF_WORKER_ID_FROM_HOSTNAME: 'true', LEAF_WORKER_ID_OFFSET: '100' }),
    );
    expect(offset.snowflake).toEqual({ ordinal: { offset: 100 } });
  });

  it('LEAF_REGION: the data-centre ID leased from LEAF_REGION_DB_URL (required with it, as is LEAF_REGION_DATA_CENTER_ID); a hand-assigned one warns in production', () => {
    const config = loadAppConfig({
      ...REGION_ENV,
      LEAF_REGION_LEASE_MS: '5000',
      LEAF_REGION_RENEW_MS: '500',
      LEAF_REGION_MARGIN_MS: '1000',
    });
    expect(config.snowflake.region).toEqual({
      type: 'postgres',
      url: REGION_ENV.LEAF_REGION_DB_URL,
    });
    const registry = { options: { type: 'postgres' } } as unknown as DataSource;
    expect(toLeafOptions(config, { region: registry }).snowflake).toMatchObject({
      region: { name: 'eu-west', dataCenterId: 1, leaseMs: 5000, dataSource: registry },
    });
    expect(effectiveLeafOptions(config).snowflake!.region).toMatchObject({
      region: 'eu-west',
      dataCenterId: 1,
      leaseMs: 5000,
      renewIntervalMs: 500,
      marginMs: 1000,
    });
    expect(config.warnings).toEqual([]);
    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        loadAppConfig(env);
        return [];
      } catch (error) {
        return (error as LeafConfigurationError).problems;
      }
    };
    const { LEAF_REGION_DB_URL: _url, ...noRegistry } = REGION_ENV;
    expect(problems(noRegistry)).toEqual([
      expect.stringMatching(/^LEAF_REGION needs LEAF_REGION_DB_URL/),
    ]);
    const { LEAF_REGION: _name, ...noName } = REGION_ENV;
    expect(problems(noName)).toEqual([
      "LEAF_REGION_DB_URL, LEAF_REGION_DATA_CENTER_ID need LEAF_REGION (this region's name)",
    ]);
    expect(problems({ ...REGION_ENV, LEAF_REGION_DB_URL: REGION_ENV.LEAF_DB_URL })).toEqual([
      expect.stringMatching(/^LEAF_REGION_DB_URL names the allocation database/),
    ]);
    const byHand = {
      LEAF_DB_URL: REGION_ENV.LEAF_DB_URL,
      LEAF_SNOWFLAKE_DATA_CENTER_BITS: '2',
      LEAF_DATA_CENTER_ID: '1',
    };
    expect(loadAppConfig(byHand).warnings).toEqual([]);
    expect(loadAppConfig({ ...byHand, NODE_ENV: 'production' }).warnings).toEqual([
      expect.stringMatching(/assigned by hand \(LEAF_DATA_CENTER_ID\).*LEAF_REGION/),
    ]);
  });

  it('effectiveLeafOptions gives the values the library runs with', () => {
    const options = effectiveLeafOptions(loadAppConfig({ LEAF_STATE_DIR: '/var/lib/leaf' }));
    expect(options.snowflake!.stateDir).toBe('/var/lib/leaf');
    expect(effectiveLeafOptions(loadAppConfig({})).snowflake!.stateDir).toBe(
      LEAF_OPTION_RULES['snowflake.stateDir'].default,
    );
    // Worker IDs leased from the database: resolved without opening it.
    const leased = effectiveLeafOptions(
      loadAppConfig({ NODE_ENV: 'production', LEAF_DB_URL: 'postgres://u@db/leaf' }),
    ).snowflake!.workerSource;
    expect(leased).toMatchObject({ kind: 'database', marginMs: 1000, callTimeoutMs: 2000 });
    if (leased.kind === 'database')
      expect(leased.store.description).toBe('PostgreSQL leaf_worker_lease');
  });
});
