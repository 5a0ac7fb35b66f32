import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { resolveLeafOptions } from '../leaf-options.resolver';

/** A DataSource as far as the resolver looks at it (its driver). */
const dataSourceOf = (type: string) => ({ options: { type } }) as unknown as DataSource;

const problemsOf = (run: () => unknown): string[] => {
  try {
    run();
    return [];
  } catch (error) {
    if (error instanceof LeafConfigurationError) return [...error.problems];
    throw error;
  }
};

describe('sequence.coordination', () => {
  const advertise = 'http://a:1';

  it("'database' on a MySQL/MariaDB or PostgreSQL dataSource: no ZooKeeper, the lease from sequence.database.leaseMs", () => {
    for (const type of ['mysql', 'mariadb', 'postgres']) {
      const { sequence } = resolveLeafOptions({
        segment: { dataSource: dataSourceOf(type) },
        sequence: { coordination: 'database', advertise, database: { leaseMs: 6000 } },
      });
      expect(sequence).toMatchObject({
        coordination: 'database',
        connect: '',
        sessionTimeoutMs: 6000,
      });
    }
    const { sequence } = resolveLeafOptions({
      segment: { dataSource: dataSourceOf('postgres') },
      sequence: { coordination: 'database', advertise },
    });
    expect(sequence?.sessionTimeoutMs).toBe(10_000);
  });

  it("'database' refuses SQLite, a store of the application's, ZooKeeper settings and a lease too short for its heartbeats", () => {
    expect(
      problemsOf(() =>
        resolveLeafOptions({
          segment: { dataSource: dataSourceOf('better-sqlite3') },
          sequence: { coordination: 'database', advertise },
        }),
      ),
    ).toEqual([expect.stringMatching(/needs MySQL\/MariaDB or PostgreSQL .*better-sqlite3/)]);
    expect(
      problemsOf(() =>
        resolveLeafOptions({
          segment: { store: new InMemoryAllocStore() },
          sequence: { coordination: 'database', advertise },
        }),
      ),
    ).toEqual([expect.stringMatching(/needs a `dataSource` .*not a `store`/)]);
    expect(
      problemsOf(() =>
        resolveLeafOptions({
          segment: { dataSource: dataSourceOf('mysql') },
          sequence: {
            coordination: 'database',
            advertise,
            zookeeper: { connect: 'zk:2181' },
            database: { leaseMs: 2000 },
          },
        }),
      ),
    ).toEqual([
      expect.stringMatching(/^sequence.zookeeper: the election is in the database/),
      expect.stringMatching(/^sequence.database.leaseMs \(2000\) must exceed/),
    ]);
  });

  it("'database' is the default without `zookeeper`; 'zookeeper' with it, needing its connect string and refusing database settings", () => {
    const resolved = resolveLeafOptions({
      segment: { dataSource: dataSourceOf('mysql') },
      sequence: { advertise, database: { leaseMs: 5000 } },
    });
    expect(resolved.sequence).toMatchObject({ coordination: 'database', sessionTimeoutMs: 5000 });
    expect(
      problemsOf(() =>
        resolveLeafOptions({
          segment: { dataSource: dataSourceOf('mysql') },
          sequence: { advertise, zookeeper: { connect: ' ' }, database: { leaseMs: 5000 } },
        }),
      ),
    ).toEqual([
      'sequence.zookeeper.connect must be a non-empty string (got " ")',
      'sequence.zookeeper.connect: a ZooKeeper connect string is required',
      expect.stringMatching(/^sequence.database: set sequence.coordination 'database'/),
    ]);
  });
});

describe('sequence.dataSource / sequence.store', () => {
  const advertise = 'http://a:1';

  it("with segment mode off, its own database: ranges, business numbers and the 'database' election there", () => {
    const dataSource = dataSourceOf('postgres');
    const resolved = resolveLeafOptions({ segment: false, sequence: { dataSource, advertise } });
    expect(resolved.segment).toBeNull();
    expect(resolved.sequence).toMatchObject({
      allocation: { kind: 'dataSource', dataSource },
      coordination: 'database',
    });
    const store = new InMemoryAllocStore();
    expect(
      resolveLeafOptions({
        segment: false,
        sequence: { store, advertise, zookeeper: { connect: 'zk:2181' } },
      }).sequence?.allocation,
    ).toEqual({ kind: 'store', store });
  });

  it("with segment mode on, segment mode's one database; the same one given again is accepted", () => {
    const dataSource = dataSourceOf('mysql');
    for (const sequence of [{ advertise }, { advertise, dataSource }]) {
      const resolved = resolveLeafOptions({ segment: { dataSource }, sequence });
      expect(resolved.sequence?.allocation).toBe(resolved.segment?.allocation);
    }
  });

  it('refuses no database, two, another than segment mode’s, and segment mode’s several', () => {
    const mysql = dataSourceOf('mysql');
    expect(
      problemsOf(() => resolveLeafOptions({ segment: false, sequence: { advertise } })),
    ).toEqual([
      expect.stringMatching(
        /^sequence mode takes its ranges from one database: give sequence.dataSource/,
      ),
    ]);
    expect(
      problemsOf(() =>
        resolveLeafOptions({
          segment: false,
          sequence: { advertise, dataSource: mysql, store: new InMemoryAllocStore() },
        }),
      ),
    ).toEqual([expect.stringMatching(/`dataSource` and `store` are exclusive/)]);
    expect(
      problemsOf(() =>
        resolveLeafOptions({
          segment: { dataSource: mysql },
          sequence: { advertise, dataSource: dataSourceOf('mysql') },
        }),
      ),
    ).toEqual([
      expect.stringMatching(
        /with segment mode on, sequence mode takes its ranges from segment mode's database/,
      ),
    ]);
    expect(
      problemsOf(() =>
        resolveLeafOptions({
          segment: { dataSources: [mysql, dataSourceOf('mysql')] },
          sequence: { advertise, zookeeper: { connect: 'zk:2181' } },
        }),
      ),
    ).toEqual([expect.stringMatching(/^sequence mode needs one database/)]);
  });
});

describe('sequence.clusterSecret', () => {
  const base = { segment: { dataSource: dataSourceOf('mysql') } };
  const secret = (c: string) => c.repeat(32);

  it('none by default; one string is one secret; a list of two is a rotation, the first signing', () => {
    const resolve = (clusterSecret?: string | string[]) =>
      resolveLeafOptions({ ...base, sequence: { advertise: 'http://a:1', clusterSecret } })
        .sequence!.clusterSecret;
    expect(resolve()).toEqual([]);
    expect(resolve(secret('a'))).toEqual([secret('a')]);
    expect(resolve([secret('n'), secret('o')])).toEqual([secret('n'), secret('o')]);
  });

  it('refuses a short secret, an empty list or more than two, without repeating any secret', () => {
    for (const clusterSecret of [
      'short-secret-value',
      [],
      [secret('n'), 'short-secret-value'],
      [secret('a'), secret('b'), secret('c')],
    ]) {
      const problems = problemsOf(() =>
        resolveLeafOptions({ ...base, sequence: { advertise: 'http://a:1', clusterSecret } }),
      );
      expect(problems).toEqual([
        'sequence.clusterSecret must be 1 or 2 secrets of at least 32 characters, the first signs',
      ]);
      expect(problems.join()).not.toMatch(/short-secret|aaaa|nnnn/);
    }
  });
});

describe('sequence.tls', () => {
  const base = { segment: { dataSource: dataSourceOf('mysql') } };
  const tls = { cert: 'CERT', key: Buffer.from('KEY'), ca: 'CA' };

  it('kept as given with an https:// advertised address; null when absent', () => {
    const resolve = (advertise: string, given?: typeof tls) =>
      resolveLeafOptions({ ...base, sequence: { advertise, tls: given } }).sequence!.tls;
    expect(resolve('https://a:8443', tls)).toBe(tls);
    expect(resolve('http://a:1')).toBeNull();
  });

  it('refuses a missing part, and an http:// advertised address', () => {
    expect(
      problemsOf(() =>
        resolveLeafOptions({
          ...base,
          sequence: { advertise: 'https://a:8443', tls: { ...tls, key: '' } },
        }),
      ),
    ).toEqual(['sequence.tls needs a PEM key']);
    expect(
      problemsOf(() => resolveLeafOptions({ ...base, sequence: { advertise: 'http://a:1', tls } })),
    ).toEqual(['sequence.tls: sequence.advertise must be an https:// address (the TLS listener)']);
  });
});
