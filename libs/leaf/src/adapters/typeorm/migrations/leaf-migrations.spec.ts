import { DataSource } from 'typeorm';
import { LeafAllocEntity } from '../leaf-alloc.entity';
import { LEAF_MIGRATIONS, LEAF_MIGRATIONS_TABLE_NAME } from './index';

/** The shipped migrations on SQLite (in memory); MariaDB: test/consumer.e2e-spec.ts, test/segment-mysql. */
/** A `leaf_alloc` made before the library's migrations (Leaf's own), with one used tag. */
const EXISTING_TABLE = [
  'CREATE TABLE leaf_alloc (biz_tag varchar(128) NOT NULL PRIMARY KEY, max_id bigint NOT NULL DEFAULT 1, step int NOT NULL, description varchar(256), update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP)',
  "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('order', 5001, 1000)",
];

describe('LEAF_MIGRATIONS', () => {
  let dataSource: DataSource;
  afterEach(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
  });

  async function open(options: { synchronize?: boolean; prepare?: string[] } = {}) {
    dataSource = new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: [LeafAllocEntity],
      migrations: LEAF_MIGRATIONS,
      migrationsTableName: LEAF_MIGRATIONS_TABLE_NAME,
      synchronize: false,
    });
    await dataSource.initialize();
    for (const sql of options.prepare ?? []) await dataSource.query(sql);
    if (options.synchronize) await dataSource.synchronize();
    await dataSource.runMigrations({ transaction: 'each' });
    return dataSource;
  }

  const schemaOf = async () =>
    (
      (await dataSource.query(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'leaf_alloc'",
      )) as Array<{ sql: string }>
    )[0]?.sql;

  it('create an empty leaf_alloc (no sample tag: the tags are the application’s), recorded in the library’s own migrations table', async () => {
    await open();
    expect(await dataSource.query('SELECT biz_tag FROM leaf_alloc')).toEqual([]);
    expect(await dataSource.query('SELECT name FROM leaf_migrations')).toEqual([
      { name: 'CreateLeafAlloc1700000000000' },
      { name: 'GuardLeafAllocMaxId1700000000001' },
      { name: 'AddLeafAllocResidueClass1700000000002' },
      { name: 'CreateLeafSequenceIssuer1700000000003' },
      { name: 'CreateLeafWorkerLease1700000000004' },
      { name: 'CreateLeafNumberFormat1700000000005' },
      { name: 'CreateLeafIdJournal1700000000006' },
      { name: 'CreateLeafGapless1700000000007' },
    ]);
  });

  it('adopt an existing leaf_alloc as it is (no CREATE)', async () => {
    await open({
      prepare: EXISTING_TABLE,
    });
    expect(await dataSource.query('SELECT biz_tag, max_id FROM leaf_alloc')).toEqual([
      { biz_tag: 'order', max_id: 5001 },
    ]);
    expect(await dataSource.query('SELECT name FROM leaf_migrations')).toHaveLength(8);
  });

  /** Reverts the number-format, lease and issuer tables, the residue-class columns, the trigger (nothing on SQLite), then the table. */
  const undoCreate = async () => {
    await dataSource.undoLastMigration({ transaction: 'each' }); // the gapless tables
    await dataSource.undoLastMigration({ transaction: 'each' }); // the ID journal
    await dataSource.undoLastMigration({ transaction: 'each' }); // leaf_number_format
    await dataSource.undoLastMigration({ transaction: 'each' }); // leaf_worker_lease
    await undoIssuerTable();
    await dataSource.undoLastMigration({ transaction: 'each' });
    await dataSource.undoLastMigration({ transaction: 'each' });
    await dataSource.undoLastMigration({ transaction: 'each' });
    return dataSource.undoLastMigration({ transaction: 'each' });
  };

  /** Reverts `CreateLeafSequenceIssuer` (the newest once the lease table is gone), checking its table goes with it. */
  const undoIssuerTable = async () => {
    await dataSource.undoLastMigration({ transaction: 'each' });
    const tables = (await dataSource.query(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'leaf_sequence_issuer'",
    )) as unknown[];
    expect(tables).toEqual([]);
  };

  it('create leaf_sequence_issuer (the database-held sequence election), empty', async () => {
    await open();
    expect(await dataSource.query('SELECT * FROM leaf_sequence_issuer')).toEqual([]);
    await dataSource.query(
      "INSERT INTO leaf_sequence_issuer (name, group_id, term, expires_at) VALUES ('leaf', 0, 0, 0)",
    );
    await expect(
      dataSource.query(
        "INSERT INTO leaf_sequence_issuer (name, group_id, term, expires_at) VALUES ('leaf', 0, 0, 0)",
      ),
    ).rejects.toThrow();
  });

  it('revert: drop a leaf_alloc holding no range, or only the untouched sample tag 0.2 seeded', async () => {
    await open();
    await undoCreate();
    expect(await schemaOf()).toBeUndefined();

    await dataSource.runMigrations({ transaction: 'each' });
    await dataSource.query(
      "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('leaf-segment-test', 1, 2000)",
    );
    await undoCreate();
    expect(await schemaOf()).toBeUndefined();
  });

  it('revert: refuse to drop allocated ranges (re-creating the table would re-issue them)', async () => {
    await open();
    await dataSource.query(
      "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('leaf-segment-test', 2001, 2000)",
    );
    await expect(undoCreate()).rejects.toThrow(/Refusing to drop leaf_alloc/);
    expect(await dataSource.query('SELECT name FROM leaf_migrations')).toHaveLength(1);
  });

  it('add the residue class (1, 0) to every row, and keep it while a row serves another class', async () => {
    await open({
      prepare: EXISTING_TABLE,
    });
    expect(await dataSource.query('SELECT id_modulus, id_residue FROM leaf_alloc')).toEqual([
      { id_modulus: 1, id_residue: 0 },
    ]);
    await dataSource.undoLastMigration({ transaction: 'each' }); // the gapless tables
    await dataSource.undoLastMigration({ transaction: 'each' }); // the ID journal
    await dataSource.undoLastMigration({ transaction: 'each' }); // leaf_number_format
    await dataSource.undoLastMigration({ transaction: 'each' }); // leaf_worker_lease
    await dataSource.query("UPDATE leaf_alloc SET id_modulus = 2 WHERE biz_tag = 'order'");
    await undoIssuerTable();
    await expect(dataSource.undoLastMigration({ transaction: 'each' })).rejects.toThrow(
      /Refusing to drop id_modulus/,
    );
    await dataSource.query("UPDATE leaf_alloc SET id_modulus = 1 WHERE biz_tag = 'order'");
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await schemaOf()).not.toContain('id_modulus');
  });

  it('create the ID journal (leaf_alloc_journal with its (biz_tag, start_id) index, leaf_worker_lease_journal); revert drops both', async () => {
    await open();
    const journalTables = () =>
      dataSource.query(
        "SELECT name FROM sqlite_master WHERE name LIKE 'leaf_%journal%' ORDER BY name",
      ) as Promise<Array<{ name: string }>>;
    expect((await journalTables()).map((row) => row.name)).toEqual([
      'leaf_alloc_journal',
      'leaf_alloc_journal_tag_start',
      'leaf_worker_lease_journal',
      'leaf_worker_lease_journal_worker',
    ]);
    await dataSource.query(
      "INSERT INTO leaf_alloc_journal (biz_tag, start_id, end_id, leaf_mode, instance, granted_at) VALUES ('t', 1, 11, 'segment', 'a', 1700000000000)",
    );
    await dataSource.undoLastMigration({ transaction: 'each' }); // the gapless tables
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await journalTables()).toEqual([]);
  });

  it.each([
    {
      table: 'leaf_number_format',
      guard: 'it holds a format',
      newer: 2, // the gapless tables, the ID journal
      row: "INSERT INTO leaf_number_format (biz_tag, leaf_mode, prefix, number_separator, date_pattern, time_zone, counter_width, reset_period) VALUES ('orders', 'segment', 'ORD', '-', 'yyyyMMdd', 'UTC', 6, 'day')",
      release: 'DELETE FROM leaf_number_format',
    },
    {
      table: 'leaf_worker_lease',
      guard: 'a row records a horizon',
      newer: 3, // and leaf_number_format
      row: "INSERT INTO leaf_worker_lease (name, worker_id, holder, run, epoch, expires_at, horizon) VALUES ('leaf', 0, 'h:1', 'r', 1, 0, 1700000000000)",
      release: 'UPDATE leaf_worker_lease SET horizon = 0',
    },
  ])(
    'create $table, and refuse to drop it while $guard',
    async ({ table, newer, row, release }) => {
      await open();
      for (let undone = 0; undone < newer; undone++)
        await dataSource.undoLastMigration({ transaction: 'each' });
      await dataSource.query(row);
      await expect(dataSource.undoLastMigration({ transaction: 'each' })).rejects.toThrow(
        `Refusing to drop ${table}`,
      );
      await dataSource.query(release);
      await dataSource.undoLastMigration({ transaction: 'each' });
      expect(
        await dataSource.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [
          table,
        ]),
      ).toEqual([]);
    },
  );

  it('create the gapless tables, one key per series, and refuse to drop them while they hold a number', async () => {
    await open();
    const insert = (number: number, key: string) =>
      dataSource.query(
        `INSERT INTO leaf_gapless_number (series, period_key, number, idem_key, state, reserved_at) VALUES ('inv', '', ${number}, '${key}', 'reserved', 0)`,
      );
    await insert(1, 'a');
    await expect(insert(2, 'a')).rejects.toThrow();
    await expect(insert(1, 'b')).rejects.toThrow();
    await expect(dataSource.undoLastMigration({ transaction: 'each' })).rejects.toThrow(
      /Refusing to drop the gapless tables/,
    );
    await dataSource.query('DELETE FROM leaf_gapless_number');
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(
      await dataSource.query("SELECT name FROM sqlite_master WHERE name LIKE 'leaf_gapless%'"),
    ).toEqual([]);
  });

  it('are left alone by synchronize: the entity opts out of it', async () => {
    await open();
    const before = await schemaOf();
    await dataSource.synchronize();
    expect(await schemaOf()).toBe(before);
    expect(before).toContain('update_time timestamp');
  });
});
