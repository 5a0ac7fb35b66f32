/**
 * The RegionRegistry contract on the TypeORM registry (`leaf_region_lease`) against real
 * MariaDB and PostgreSQL, each in a database of this file's own with the schema from
 * `LEAF_REGION_MIGRATIONS`.
 */
import type { DataSource } from 'typeorm';
import { LEAF_REGION_MIGRATIONS, TypeormRegionRegistry } from 'nestjs-leaf/storage/typeorm';
import { regionRegistryContract } from '@app/leaf/testing/contracts/region-registry.contract';
import { createPostgresTestDatabase } from '../support/postgres-database';
import { createTestDatabase } from '../support/test-database';
import { describeWithServices } from '../support/services';

jest.setTimeout(30_000);

interface Db {
  openDataSource(options: { overrides?: object }): Promise<DataSource>;
  drop(): Promise<void>;
}

function onDatabase(service: 'mysql' | 'postgres', create: () => Promise<Db>): void {
  describeWithServices([service], `RegionRegistry contract on ${service}`, () => {
    regionRegistryContract(`TypeormRegionRegistry (${service})`, async () => {
      const db = await create();
      const dataSource = await db.openDataSource({
        overrides: { migrations: LEAF_REGION_MIGRATIONS, entities: [] },
      });
      await dataSource.runMigrations();
      return {
        registry: new TypeormRegionRegistry(dataSource),
        elapse: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        insertRow: async (name, row) => {
          await dataSource.query(
            `INSERT INTO leaf_region_lease (name, data_center_id, region, epoch, expires_at, horizon, floor_ms) VALUES (${
              service === 'postgres' ? '$1, $2, $3, $4, $5, $6, $7' : '?, ?, ?, ?, ?, ?, ?'
            })`,
            [
              name,
              row.dataCenterId,
              row.region,
              row.epoch.toString(),
              row.expiresAt,
              row.horizon,
              row.floor,
            ],
          );
        },
        close: async () => {
          await dataSource.destroy();
          await db.drop();
        },
      };
    });
  });
}

onDatabase('mysql', () => createTestDatabase());
onDatabase('postgres', () => createPostgresTestDatabase());
