/**
 * Sequence mode with segment mode off, on MariaDB and on PostgreSQL (docs/sequence.md): two
 * instances started with `LEAF_SEGMENT_ENABLED=false` take their ranges from `LEAF_DB_URL`
 * (the library's `sequence.dataSource`), elect the issuer in it, and serve sequence IDs and
 * business numbers in one order across both; readiness says sequence is up and segment off.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DataSource } from 'typeorm';
import { LEAF_RESOLVED_OPTIONS, type ResolvedLeafOptions } from 'nestjs-leaf/server';
import { BusinessNumberService } from 'nestjs-leaf/numbers';
import { createLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import {
  expectLeafError,
  startSelfAdvertisingApp,
  tempDir,
  type InjectedAnswer,
} from './support/app';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices } from './support/services';

jest.setTimeout(60_000);

const TOKEN = 'e2e-admin-token-seqdb-0123456789ab';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(
  app: NestFastifyApplication,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
): Promise<InjectedAnswer> {
  const res = await app
    .getHttpAdapter()
    .getInstance()
    .inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  return { statusCode: res.statusCode, headers: res.headers, body: res.body };
}

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices(
    [flavour.service],
    `sequence mode without segment on ${flavour.label}`,
    () => {
      let db: ServerTestDatabase;
      let rows: DataSource;
      let state: ReturnType<typeof tempDir>;
      let a: NestFastifyApplication;
      let b: NestFastifyApplication;

      beforeAll(async () => {
        db = await flavour.create({ migrate: true });
        rows = await db.openDataSource();
        const store = createLeafAllocStore(rows);
        await store.createTag({ tag: 'seqdb-ledger', step: 5 });
        await store.createTag({ tag: 'seqdb-invoices', step: 5 });
        state = tempDir('leaf-seqdb');
        const env = {
          LEAF_DB_URL: db.url,
          LEAF_SEGMENT_ENABLED: 'false',
          LEAF_SNOWFLAKE_ENABLED: 'false',
          LEAF_STATE_DIR: state.path,
          LEAF_NAME: `seqdb${Date.now().toString(36)}`,
          LEAF_ADMIN_TOKEN: TOKEN,
        };
        a = await startSelfAdvertisingApp(env);
        b = await startSelfAdvertisingApp(env);
        // One of the two is elected issuer of the one group; both are ready once it is known.
        const deadline = Date.now() + 30_000;
        while (
          (await call(a, 'GET', '/health/ready')).statusCode !== 200 ||
          (await call(b, 'GET', '/health/ready')).statusCode !== 200
        ) {
          if (Date.now() > deadline) throw new Error('sequence mode never became ready');
          await sleep(200);
        }
      });

      afterAll(async () => {
        await Promise.all([a?.close(), b?.close()]);
        await rows?.destroy();
        await db?.drop();
        state?.remove();
      });

      it('runs sequence mode alone, on its own database, ready, with segment mode off', async () => {
        const options = a.get<ResolvedLeafOptions>(LEAF_RESOLVED_OPTIONS);
        expect(options.segment).toBeNull();
        expect(options.sequence).toMatchObject({
          coordination: 'database',
          allocation: { kind: 'dataSource' },
        });
        const ready = JSON.parse((await call(a, 'GET', '/health/ready')).body);
        expect(ready.details).toMatchObject({
          segment: { status: 'up', enabled: false },
          sequence: { status: 'up' },
        });
        expectLeafError(
          await call(a, 'GET', '/api/segment/get/seqdb-ledger'),
          404,
          'LEAF_MODE_DISABLED',
        );
      });

      it('serves sequence IDs in one order across both instances', async () => {
        const ids: bigint[] = [];
        for (let i = 0; i < 12; i++) {
          const answer = await call(i % 2 ? b : a, 'GET', '/api/sequence/get/seqdb-ledger');
          expect(answer.statusCode).toBe(200);
          ids.push(BigInt(answer.body));
        }
        for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
        const batch = JSON.parse(
          (await call(b, 'GET', '/api/sequence/ids/seqdb-ledger?count=3')).body,
        );
        expect(BigInt(batch.ids[0]) > ids[ids.length - 1]!).toBe(true);
      });

      it('serves business numbers of a sequence format, through the routes and the service', async () => {
        const created = await call(a, 'POST', '/admin/formats', {
          biz_tag: 'seqdb-invoices',
          mode: 'sequence',
          prefix: 'INV',
          width: 6,
        });
        expect(created.statusCode).toBe(201);
        const first = await call(b, 'GET', '/api/sequence/number/seqdb-invoices');
        expect(first.statusCode).toBe(200);
        const numbers = [
          first.body,
          (await call(a, 'GET', '/api/sequence/number/seqdb-invoices')).body,
          ...JSON.parse((await call(b, 'GET', '/api/sequence/numbers/seqdb-invoices?count=2')).body)
            .numbers,
          await a.get(BusinessNumberService).next('seqdb-invoices'),
        ];
        // In order across both instances, from 1 (no date: one counter that never restarts).
        expect(numbers).toEqual(['1', '2', '3', '4', '5'].map((n) => `INV-00000${n}`));
        // A format of segment mode's is kept, but not served: that mode is off here.
        const segmentFormat = { biz_tag: 'seqdb-ledger', prefix: 'L', width: 6 };
        expect((await call(a, 'POST', '/admin/formats', segmentFormat)).statusCode).toBe(201);
        expectLeafError(
          await call(a, 'GET', '/api/segment/number/seqdb-ledger'),
          404,
          'LEAF_MODE_DISABLED',
        );
      });
    },
  );
}
