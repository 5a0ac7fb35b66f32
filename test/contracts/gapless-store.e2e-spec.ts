/**
 * The GaplessStore contract on the TypeORM store against real MariaDB and PostgreSQL, each
 * in a database of this file's own with the schema from the migrations; two DataSources
 * stand for two instances.
 */
import type { DataSource } from 'typeorm';
import { TypeormGaplessStore } from '@app/leaf/adapters/typeorm/typeorm-gapless.store';
import { gaplessStoreContract } from '@app/leaf/testing/contracts/gapless-store.contract';
import { createPostgresTestDatabase } from '../support/postgres-database';
import { createTestDatabase } from '../support/test-database';
import { describeWithServices } from '../support/services';

jest.setTimeout(60_000);

async function twoStores(openDataSource: () => Promise<DataSource>, drop: () => Promise<void>) {
  const first = await openDataSource();
  const second = await openDataSource();
  return {
    store: new TypeormGaplessStore(first, 5000),
    other: new TypeormGaplessStore(second, 5000),
    close: async () => {
      await first.destroy();
      await second.destroy();
      await drop();
    },
  };
}

describeWithServices(['mysql'], 'GaplessStore contract on MariaDB', () => {
  gaplessStoreContract('TypeormGaplessStore (mysql)', async () => {
    const db = await createTestDatabase();
    let migrated = false;
    return twoStores(
      async () => {
        const dataSource = await db.openDataSource({ migrate: !migrated });
        migrated = true;
        return dataSource;
      },
      () => db.drop(),
    );
  });
});

describeWithServices(['postgres'], 'GaplessStore contract on PostgreSQL', () => {
  gaplessStoreContract('TypeormGaplessStore (postgres)', async () => {
    const db = await createPostgresTestDatabase({ migrate: true });
    return twoStores(
      () => db.openDataSource(),
      () => db.drop(),
    );
  });
});
