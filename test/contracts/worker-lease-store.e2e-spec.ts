/**
 * The WorkerLeaseStore contract on the TypeORM store (`leaf_worker_lease`) against real
 * MariaDB and PostgreSQL, each in a database of this file's own with the schema from the
 * migrations.
 */
import type { DataSource } from 'typeorm';
import { createWorkerLeaseStore } from 'nestjs-leaf/storage/typeorm';
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

/**
 * A claimer that freezes inside its transaction (after locking the namespace's rows) must not
 * block the holders' renewals for long: the server ends its session after a few seconds.
 */
function frozenClaimer(service: 'mysql' | 'postgres', create: () => Promise<Db>): void {
  describeWithServices([service], `a claimer frozen in its transaction on ${service}`, () => {
    let db: Db;
    let holderSource: DataSource;
    let claimerSource: DataSource;
    beforeAll(async () => {
      db = await create();
      holderSource = await db.openDataSource({ migrate: true });
      claimerSource = await db.openDataSource({});
    });
    afterAll(async () => {
      await holderSource?.destroy();
      await claimerSource?.destroy().catch(() => undefined);
      await db?.drop();
    });

    it('is cut off by the server within seconds: a holder’s renewal goes through', async () => {
      const holders = createWorkerLeaseStore(holderSource);
      const result = await holders.claim({
        name: 'frozen',
        holder: 'h:1',
        run: 'rh',
        leaseMs: 60_000,
        maxWorkerId: 1023,
      });
      if (!('claimed' in result)) throw new Error('no worker ID');
      // The claimer's runner stops answering right after its rows are locked.
      let locked!: () => void;
      const rowsLocked = new Promise<void>((resolve) => (locked = resolve));
      const original = claimerSource.createQueryRunner.bind(claimerSource);
      claimerSource.createQueryRunner = (...args) => {
        const runner = original(...args);
        const query = runner.query.bind(runner);
        let frozen = false;
        runner.query = (async (sql: string, ...rest: unknown[]) => {
          if (frozen) return new Promise(() => undefined);
          const answer = await (query as (...a: unknown[]) => Promise<unknown>)(sql, ...rest);
          if (/FOR UPDATE/.test(sql)) {
            frozen = true;
            locked();
          }
          return answer;
        }) as typeof runner.query;
        return runner;
      };
      void createWorkerLeaseStore(claimerSource)
        .claim({ name: 'frozen', holder: 'c:1', run: 'rc', leaseMs: 60_000, maxWorkerId: 1023 })
        .catch(() => undefined);
      await rowsLocked;
      const started = Date.now();
      expect(await holders.renew(result.claimed, 60_000, 1_000)).toBe(true);
      const blockedMs = Date.now() - started;
      // The claim session's idle bound is 3 s; without it the renewal waits for the server's
      // lock wait (50 s on MariaDB, forever on PostgreSQL).
      expect(blockedMs).toBeGreaterThan(1_000);
      expect(blockedMs).toBeLessThan(8_000);
    });
  });
}

onDatabase('mysql', () => createTestDatabase());
onDatabase('postgres', () => createPostgresTestDatabase());
frozenClaimer('mysql', () => createTestDatabase());
frozenClaimer('postgres', () => createPostgresTestDatabase());
