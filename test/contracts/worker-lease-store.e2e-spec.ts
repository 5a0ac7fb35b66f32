/**
 * The WorkerLeaseStore contract on the TypeORM store (`leaf_worker_lease`) against real
 * MariaDB and PostgreSQL, each in a database of this file's own with the schema from the
 * migrations.
 */
import type { DataSource } from 'typeorm';
import { createWorkerLeaseStore } from 'nestjs-leaf/typeorm';
import { workerLeaseStoreContract } from '@app/leaf/testing/contracts/worker-lease-store.contract';
import { createPostgresTestDatabase } from '../support/postgres-database';
import { createTestDatabase } from '../support/test-database';
import { describeWithServices } from '../support/services';

jest.setTimeout(30_000);

interface Db {
  openDataSource(options: { migrate?: boolean }): Promise<DataSource>;
  drop(): Promise<void>;
}

function onDatabase(service: 'mysql' | 'postgres', create: () => Promise<Db>): void {
  describeWithServices([service], `WorkerLeaseStore contract on ${service}`, () => {
    workerLeaseStoreContract(`TypeormWorkerLeaseStore (${service})`, async () => {
      const db = await create();
      const dataSource = await db.openDataSource({ migrate: true });
      return {
        store: createWorkerLeaseStore(dataSource),
        elapse: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        insertRow: async (name, row) => {
          await dataSource.query(
            `INSERT INTO leaf_worker_lease (name, worker_id, holder, run, epoch, expires_at, horizon) VALUES (${
              service === 'postgres' ? '$1, $2, $3, $4, $5, $6, $7' : '?, ?, ?, ?, ?, ?, ?'
            })`,
            [
              name,
              row.workerId,
              row.holder,
              row.run,
              row.epoch.toString(),
              row.expiresAt,
              row.horizon,
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
