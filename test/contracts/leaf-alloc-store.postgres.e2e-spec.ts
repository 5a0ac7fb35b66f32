/**
 * The LeafAllocStore contract on PostgresLeafAllocStore against the test PostgreSQL (a
 * database of this file's own, schema from the migrations): with LeafAllocEntity in the
 * DataSource's `entities` (the application's options), without it, and without it on a
 * driver that parses int8 into JavaScript numbers (`parseInt8`).
 */
import type { DataSourceOptions } from 'typeorm';
import { LeafAllocEntity, PostgresLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { postgresSql } from '@app/leaf/adapters/typeorm/postgres.dialect';
import { leafAllocStoreContract } from '@app/leaf/testing/contracts/leaf-alloc-store.contract';
import { sqlLeafAllocHarness, UNWRITABLE_HIGH_WATER } from '../support/leaf-alloc-harness';
import {
  createPostgresTestDatabase,
  type PostgresTestDatabase,
} from '../support/postgres-database';
import { describeWithServices } from '../support/services';

describeWithServices(['postgres'], 'LeafAllocStore contract on PostgreSQL', () => {
  let db: PostgresTestDatabase;

  beforeAll(async () => {
    db = await createPostgresTestDatabase({ migrate: true });
  });

  afterAll(async () => {
    await db?.drop();
  });

  const open = (overrides: Partial<DataSourceOptions>, entityListed: boolean) => async () => {
    const dataSource = await db.openDataSource({ overrides });
    // The run must be what its name says.
    expect(dataSource.hasMetadata(LeafAllocEntity)).toBe(entityListed);
    return sqlLeafAllocHarness(
      postgresSql(dataSource),
      new PostgresLeafAllocStore(dataSource),
      () => dataSource.destroy(),
      new PostgresLeafAllocStore(dataSource, { highWater: UNWRITABLE_HIGH_WATER }),
    );
  };

  leafAllocStoreContract(
    'PostgresLeafAllocStore, LeafAllocEntity listed in entities',
    open({}, true),
  );
  leafAllocStoreContract(
    'PostgresLeafAllocStore, LeafAllocEntity not listed',
    open({ entities: [] }, false),
  );
  // Last: pg's parseInt8 is a process-wide default once a DataSource sets it.
  leafAllocStoreContract(
    'PostgresLeafAllocStore, entity not listed, int8 parsed as numbers',
    open({ entities: [], parseInt8: true } as Partial<DataSourceOptions>, false),
  );
});
