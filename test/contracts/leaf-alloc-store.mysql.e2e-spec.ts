/**
 * The LeafAllocStore contract on MysqlLeafAllocStore against the test MariaDB/MySQL (a
 * database of this file's own, schema from the migrations): with LeafAllocEntity in the
 * DataSource's `entities` (the application's options), without it, and without it on a
 * driver that returns BIGINT as plain numbers (no supportBigNumbers/bigNumberStrings).
 */
import type { DataSourceOptions } from 'typeorm';
import { LeafAllocEntity, MysqlLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { leafAllocStoreContract } from '@app/leaf/testing/contracts/leaf-alloc-store.contract';
import { sqlLeafAllocHarness, UNWRITABLE_HIGH_WATER } from '../support/leaf-alloc-harness';
import { describeWithServices } from '../support/services';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

describeWithServices(['mysql'], 'LeafAllocStore contract on MariaDB', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
  });

  afterAll(async () => {
    await db?.drop();
  });

  const open = (overrides: Partial<DataSourceOptions>, entityListed: boolean) => async () => {
    const dataSource = await db.openDataSource({ overrides });
    // The run must be what its name says.
    expect(dataSource.hasMetadata(LeafAllocEntity)).toBe(entityListed);
    return sqlLeafAllocHarness(
      dataSource,
      new MysqlLeafAllocStore(dataSource),
      () => dataSource.destroy(),
      new MysqlLeafAllocStore(dataSource, { highWater: UNWRITABLE_HIGH_WATER }),
    );
  };

  leafAllocStoreContract('MysqlLeafAllocStore, LeafAllocEntity listed in entities', open({}, true));
  leafAllocStoreContract(
    'MysqlLeafAllocStore, LeafAllocEntity not listed',
    open({ entities: [] }, false),
  );
  leafAllocStoreContract(
    'MysqlLeafAllocStore, entity not listed, BIGINT as numbers',
    open(
      {
        entities: [],
        supportBigNumbers: false,
        bigNumberStrings: false,
      } as Partial<DataSourceOptions>,
      false,
    ),
  );
});
