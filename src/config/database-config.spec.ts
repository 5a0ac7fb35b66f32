import { LeafConfigurationError } from 'nestjs-leaf';
import { DEFAULT_DB_URL, loadDatabaseConfig, parseDatabaseConfig } from './database-config';

describe('parseDatabaseConfig', () => {
  it('defaults to the embedded SQLite file outside production', () => {
    expect(DEFAULT_DB_URL).toBe('sqlite:./data/leaf.sqlite');
    expect(parseDatabaseConfig({})).toEqual({
      database: { type: 'sqlite', path: './data/leaf.sqlite' },
      urls: null,
      highWater: null,
      region: null,
      problems: [],
    });
    expect(parseDatabaseConfig({ LEAF_DB_URL: '  ' }).database).toEqual({
      type: 'sqlite',
      path: './data/leaf.sqlite',
    });
  });

  it('reads sqlite:<file>, mysql:// and mariadb:// (as mysql://)', () => {
    expect(parseDatabaseConfig({ LEAF_DB_URL: 'sqlite:/tmp/x.sqlite' }).database).toEqual({
      type: 'sqlite',
      path: '/tmp/x.sqlite',
    });
    expect(parseDatabaseConfig({ LEAF_DB_URL: ' mysql://u:p@db:3306/leaf ' }).database).toEqual({
      type: 'mysql',
      url: 'mysql://u:p@db:3306/leaf',
    });
    expect(parseDatabaseConfig({ LEAF_DB_URL: 'mariadb://u@db/leaf?ssl=1' }).database).toEqual({
      type: 'mysql',
      url: 'mysql://u@db/leaf?ssl=1',
    });
  });

  it('reads postgres:// and postgresql:// as PostgreSQL, the URL as given (pg takes both)', () => {
    for (const url of ['postgres://u:p@db:5432/leaf', 'postgresql://u@db/leaf?sslmode=require']) {
      expect(parseDatabaseConfig({ LEAF_DB_URL: url })).toEqual({
        database: { type: 'postgres', url },
        urls: null,
        highWater: null,
        region: null,
        problems: [],
      });
    }
  });

  it('reads LEAF_DB_URLS (several databases), exclusive with LEAF_DB_URL, MySQL or PostgreSQL', () => {
    const parsed = parseDatabaseConfig({
      LEAF_DB_URLS: 'mysql://u@a:3306/leaf, mariadb://u@b:3306/leaf',
    });
    expect(parsed).toEqual({
      database: { type: 'mysql', url: 'mysql://u@a:3306/leaf' },
      urls: ['mysql://u@a:3306/leaf', 'mysql://u@b:3306/leaf'],
      highWater: null,
      region: null,
      problems: [],
    });
    expect(
      parseDatabaseConfig({ LEAF_DB_URL: 'mysql://u@a/x', LEAF_DB_URLS: 'mysql://u@b/x' }).problems,
    ).toEqual([expect.stringMatching(/^LEAF_DB_URL and LEAF_DB_URLS are exclusive/)]);
    expect(
      parseDatabaseConfig({ LEAF_DB_URLS: 'mysql://u:secret@a/x,sqlite:/tmp/x' }).problems,
    ).toEqual([expect.stringMatching(/^LEAF_DB_URLS must be .*"sqlite:\/tmp\/x"/)]);
    expect(
      parseDatabaseConfig({ LEAF_DB_URLS: 'postgres://u@a/x,postgresql://u@b/x' }),
    ).toMatchObject({
      database: { type: 'postgres', url: 'postgres://u@a/x' },
      urls: ['postgres://u@a/x', 'postgresql://u@b/x'],
      problems: [],
    });
    expect(parseDatabaseConfig({ LEAF_DB_URLS: 'mysql://u@a/x,mysql://u@a/x' }).problems).toEqual([
      'LEAF_DB_URLS lists a database twice',
    ]);
  });

  it('refuses LEAF_DB_URLS to the one-database tools (migrations, the TypeORM CLI)', () => {
    expect(() => loadDatabaseConfig({ LEAF_DB_URLS: 'mysql://u@a/x,mysql://u@b/x' })).toThrow(
      /migrate each on its own, with LEAF_DB_URL/,
    );
  });

  it('never quotes the password of a URL it refuses', () => {
    const [problem] = parseDatabaseConfig({
      LEAF_DB_URL: 'postgress://leaf:Hunter22@db/leaf',
    }).problems;
    expect(problem).toContain('(got "postgress://leaf:***@db/leaf")');
    expect(problem).not.toContain('Hunter22');
  });

  it('names what is wrong with an invalid LEAF_DB_URL', () => {
    expect(parseDatabaseConfig({ LEAF_DB_URL: 'sqlite:' }).problems).toEqual([
      expect.stringMatching(/^LEAF_DB_URL "sqlite:" needs a file path/),
    ]);
    for (const url of ['foo', 'mysql://db', 'postgres://db', 'pg://db/leaf']) {
      expect(parseDatabaseConfig({ LEAF_DB_URL: url }).problems).toEqual([
        expect.stringContaining(
          `LEAF_DB_URL must be mysql://user:pass@host:3306/db, postgres://user:pass@host:5432/db or sqlite:<file> (got "${url}")`,
        ),
      ]);
    }
  });

  it('with NODE_ENV=production, refuses the embedded default but accepts any set LEAF_DB_URL', () => {
    const [problem] = parseDatabaseConfig({ NODE_ENV: 'production' }).problems;
    expect(problem).toMatch(
      /^NODE_ENV=production: .*LEAF_DB_URL is not set.*LEAF_DB_URL=mysql:.*LEAF_DB_URL=sqlite:/,
    );
    expect(problem).not.toContain(', or LEAF_SEGMENT_ENABLED');
    for (const url of [
      'mysql://u@db/leaf',
      'postgres://u@db/leaf',
      'sqlite:/var/lib/leaf/leaf.sqlite',
    ]) {
      expect(parseDatabaseConfig({ NODE_ENV: 'production', LEAF_DB_URL: url }).problems).toEqual(
        [],
      );
    }
  });

  it('applies the production rule only to a process that needs the database, naming its other way out', () => {
    expect(parseDatabaseConfig({ NODE_ENV: 'production' }, { required: false }).problems).toEqual(
      [],
    );
    expect(
      parseDatabaseConfig({ NODE_ENV: 'production' }, { otherwise: 'LEAF_SEGMENT_ENABLED=false' })
        .problems[0],
    ).toMatch(/, or LEAF_SEGMENT_ENABLED=false$/);
  });
});

describe('loadDatabaseConfig', () => {
  it('reads the database settings only: the service’s other variables do not concern it', () => {
    expect(
      loadDatabaseConfig({
        NODE_ENV: 'production',
        LEAF_DB_URL: 'mysql://u@db/leaf',
        LEAF_WORKER_ID: 'not a number',
        LEAF_ZK_ADDRESS: '',
      }),
    ).toEqual({ type: 'mysql', url: 'mysql://u@db/leaf' });
  });

  it('throws one LeafConfigurationError listing the problems', () => {
    let error: unknown;
    try {
      loadDatabaseConfig({ NODE_ENV: 'production' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect((error as LeafConfigurationError).problems).toHaveLength(1);
  });

  describe('LEAF_SEGMENT_HIGH_WATER_DB_URL', () => {
    const problemsOf = (env: NodeJS.ProcessEnv) => parseDatabaseConfig(env).problems;

    it('reads a mysql://, mariadb:// or postgres:// URL of another database', () => {
      expect(
        parseDatabaseConfig({
          LEAF_DB_URL: 'mysql://leaf@db:3306/leaf',
          LEAF_SEGMENT_HIGH_WATER_DB_URL: 'postgres://leaf@marks:5432/marks',
        }),
      ).toMatchObject({
        highWater: { type: 'postgres', url: 'postgres://leaf@marks:5432/marks' },
        problems: [],
      });
      expect(
        parseDatabaseConfig({
          LEAF_DB_URL: 'mysql://leaf@db:3306/leaf',
          LEAF_SEGMENT_HIGH_WATER_DB_URL: 'mariadb://leaf@db:3306/marks',
        }).highWater,
      ).toEqual({ type: 'mysql', url: 'mysql://leaf@db:3306/marks' });
      expect(problemsOf({ LEAF_SEGMENT_HIGH_WATER_DB_URL: 'sqlite:./marks' })[0]).toMatch(
        /LEAF_SEGMENT_HIGH_WATER_DB_URL must be mysql:/,
      );
    });

    it('refuses the allocation database, by host, port and database after normalising, naming both variables', () => {
      const same: Array<[string, string]> = [
        ['mysql://leaf@db:3306/leaf', 'mysql://other:pw@DB/leaf'],
        ['mysql://leaf@localhost/leaf', 'mariadb://root@127.0.0.1:3306/leaf?ssl=true'],
        ['postgres://leaf@pg/leaf', 'postgresql://marks@pg:5432/leaf'],
      ];
      for (const [allocation, marks] of same) {
        const problems = problemsOf({
          LEAF_DB_URL: allocation,
          LEAF_SEGMENT_HIGH_WATER_DB_URL: marks,
        });
        expect([marks, problems]).toEqual([
          marks,
          [
            expect.stringMatching(
              /^LEAF_SEGMENT_HIGH_WATER_DB_URL names the allocation database of LEAF_DB_URL/,
            ),
          ],
        ]);
      }
      expect(
        problemsOf({
          LEAF_DB_URLS: 'postgres://a@pg0:5432/leaf,postgres://a@pg1:5432/leaf',
          LEAF_SEGMENT_HIGH_WATER_DB_URL: 'postgres://marks@PG1/leaf',
        })[0],
      ).toMatch(/names the allocation database of LEAF_DB_URLS \(pg1:5432\/leaf\)/);
      // Another database, port or host is another database.
      for (const marks of [
        'mysql://leaf@db:3306/marks',
        'mysql://leaf@db:3307/leaf',
        'mysql://leaf@db2:3306/leaf',
      ]) {
        expect(
          problemsOf({
            LEAF_DB_URL: 'mysql://leaf@db:3306/leaf',
            LEAF_SEGMENT_HIGH_WATER_DB_URL: marks,
          }),
        ).toEqual([]);
      }
    });

    it('the migration tools read it too (loadDatabaseConfig refuses the allocation database)', () => {
      expect(() =>
        loadDatabaseConfig({
          LEAF_DB_URL: 'postgres://leaf@pg:5432/leaf',
          LEAF_SEGMENT_HIGH_WATER_DB_URL: 'postgres://leaf@pg:5432/leaf',
        }),
      ).toThrow(LeafConfigurationError);
    });
  });
});
