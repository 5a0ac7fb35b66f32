import { DataSource } from 'typeorm';
import { APP_MIGRATIONS_TABLE_NAME } from './app-migrations';
import { buildDataSourceOptions } from './data-source.options';

/**
 * The application's migration set (migrations/) on SQLite in memory, as the application,
 * `npm run migrate` and the TypeORM CLI build it; on MariaDB: test/migrate.e2e-spec.ts.
 */
/** The library's migrations, in the order they run. */
const LIBRARY_MIGRATIONS = [
  'CreateLeafAlloc1700000000000',
  'GuardLeafAllocMaxId1700000000001',
  'AddLeafAllocResidueClass1700000000002',
  'CreateLeafSequenceIssuer1700000000003',
  'CreateLeafWorkerLease1700000000004',
  'CreateLeafNumberFormat1700000000005',
  'CreateLeafIdJournal1700000000006',
  'CreateLeafGapless1700000000007',
];

describe('the application’s migrations (migrations/)', () => {
  let dataSource: DataSource;
  afterEach(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
  });

  async function open(prepare: string[] = []): Promise<DataSource> {
    dataSource = new DataSource(buildDataSourceOptions({ type: 'sqlite', path: ':memory:' }));
    await dataSource.initialize();
    for (const sql of prepare) await dataSource.query(sql);
    await dataSource.runMigrations({ transaction: 'each' });
    return dataSource;
  }
  const tags = () =>
    dataSource.query('SELECT biz_tag, max_id, step FROM leaf_alloc ORDER BY biz_tag');
  const recorded = async () =>
    (
      (await dataSource.query(
        `SELECT name FROM ${APP_MIGRATIONS_TABLE_NAME} ORDER BY id`,
      )) as Array<{
        name: string;
      }>
    ).map((row) => row.name);

  /** A database the library's first migration made when it still seeded the sample tag. */
  const before = (rows: string[]): string[] => [
    'CREATE TABLE leaf_migrations (id integer PRIMARY KEY AUTOINCREMENT NOT NULL, timestamp bigint NOT NULL, name varchar NOT NULL)',
    "INSERT INTO leaf_migrations (timestamp, name) VALUES (1700000000000, 'CreateLeafAlloc1700000000000')",
    "CREATE TABLE leaf_alloc (biz_tag varchar(128) NOT NULL DEFAULT '' PRIMARY KEY, max_id bigint NOT NULL DEFAULT 1, step int NOT NULL, description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP)",
    ...rows.map((values) => `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ${values}`),
  ];

  it('are the library’s migrations, then the application’s files, in leaf_migrations', async () => {
    await open();
    expect(await recorded()).toEqual([...LIBRARY_MIGRATIONS, 'SeedDemoTag1796304233815']);
    expect(await tags()).toEqual([{ biz_tag: 'leaf-segment-test', max_id: 1, step: 2000 }]);
    expect(await dataSource.runMigrations()).toEqual([]);
  });

  it('leave a database from before the move as it is: its sample tag, used or not, and its own tags', async () => {
    await open(before(["('leaf-segment-test', 4001, 2000)", "('order', 5001, 1000)"]));
    expect(await recorded()).toEqual([...LIBRARY_MIGRATIONS, 'SeedDemoTag1796304233815']);
    expect(await tags()).toEqual([
      { biz_tag: 'leaf-segment-test', max_id: 4001, step: 2000 },
      { biz_tag: 'order', max_id: 5001, step: 1000 },
    ]);
  });

  it('never re-create a demo tag an operator deleted', async () => {
    await open(before(["('order', 5001, 1000)"]));
    expect(await tags()).toEqual([{ biz_tag: 'order', max_id: 5001, step: 1000 }]);
  });

  it('revert the seed by removing the demo tag while untouched, and keeping it once used', async () => {
    await open();
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await tags()).toEqual([]);
    expect(await recorded()).toEqual(LIBRARY_MIGRATIONS);

    await dataSource.runMigrations({ transaction: 'each' });
    await dataSource.query(
      "UPDATE leaf_alloc SET max_id = 2001 WHERE biz_tag = 'leaf-segment-test'",
    );
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await tags()).toEqual([{ biz_tag: 'leaf-segment-test', max_id: 2001, step: 2000 }]);
    // …and the library's migration then refuses to drop the allocated range (after the
    // gapless, journal, number-format, lease and issuer tables, its residue-class columns and
    // its trigger migration, a no-op on SQLite, were reverted).
    for (let reverted = 0; reverted < 7; reverted++) {
      await dataSource.undoLastMigration({ transaction: 'each' });
    }
    await expect(dataSource.undoLastMigration({ transaction: 'each' })).rejects.toThrow(
      /Refusing to drop leaf_alloc/,
    );
  });
});
