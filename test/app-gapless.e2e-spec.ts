/**
 * Gapless series through the application on MariaDB and PostgreSQL (docs/gapless.md,
 * "Routes"): `LEAF_GAPLESS=true`, series made through the admin API and the CLI, numbers
 * reserved, confirmed, voided and expired over HTTP and through the remote client, hostile
 * input refused at the door, the client-token scope `gapless`, `verify` (route and CLI, which
 * exits 4 once a record is tampered with), readiness following the database, and the metrics.
 */
import { createHash } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LeafClient } from 'nestjs-leaf/client';
import { GaplessSettledError } from 'nestjs-leaf/errors';
import { runCli } from '../src/cli';
import { APP_DATA_SOURCES, type AppDataSources } from '../src/database/database.module';
import { expectLeafError, inject, startApp, tempDir, type InjectedAnswer } from './support/app';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices } from './support/services';

jest.setTimeout(120_000);

const TOKEN = 'e2e-admin-token-0123456789abcdef';
const INVOICES = 'client-invoices-0123456789abcdef';
const ORDERS = 'client-orders-0123456789abcdefgh';
const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');
const CLIENTS = [
  { name: 'billing', sha256: sha256(INVOICES), modes: ['gapless'], tags: ['inv*'] },
  { name: 'orders', sha256: sha256(ORDERS), modes: ['segment'], tags: ['*'] },
];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function call(
  app: NestFastifyApplication,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
  token = url.startsWith('/admin') ? TOKEN : INVOICES,
): Promise<InjectedAnswer> {
  return inject(app, url, { method, body, headers: { authorization: `Bearer ${token}` } });
}

const json = (answer: InjectedAnswer) => JSON.parse(answer.body) as Record<string, unknown>;

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices([flavour.service], `gapless series in the app on ${flavour.label}`, () => {
    let db: ServerTestDatabase;
    let state: ReturnType<typeof tempDir>;
    let app: NestFastifyApplication;
    let off: NestFastifyApplication;

    beforeAll(async () => {
      db = await flavour.create({ migrate: true });
      state = tempDir('leaf-gapless');
      const env = {
        LEAF_DB_URL: db.url,
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_STATE_DIR: state.path,
        LEAF_ADMIN_TOKEN: TOKEN,
        LEAF_CLIENT_TOKENS: JSON.stringify(CLIENTS),
      };
      app = await startApp({ ...env, LEAF_GAPLESS: 'true' }, { listen: true });
      off = await startApp(env);
    });

    afterAll(async () => {
      await Promise.all([app?.close(), off?.close()]);
      await db?.drop();
      state?.remove();
    });

    it('creates, lists and shows series through the admin API; a day period, a duplicate and a missing corrected series refused', async () => {
      const created = await call(app, 'POST', '/admin/gapless', {
        name: 'inv',
        prefix: 'INV',
        width: 6,
        period: 'year',
        timeZone: 'Europe/Madrid',
      });
      expect(created.statusCode).toBe(201);
      expect(json(created)).toEqual({
        name: 'inv',
        prefix: 'INV',
        width: 6,
        period: 'year',
        timeZone: 'Europe/Madrid',
        externalCode: null,
        correctionsOf: null,
        createdAt: expect.any(Number),
      });
      const corrections = { name: 'inv-r', prefix: 'R', correctionsOf: 'inv' };
      expect((await call(app, 'POST', '/admin/gapless', corrections)).statusCode).toBe(201);
      expectLeafError(
        await call(app, 'POST', '/admin/gapless', { name: 'inv' }),
        409,
        'LEAF_GAPLESS_SERIES_EXISTS',
      );
      const day = expectLeafError(
        await call(app, 'POST', '/admin/gapless', { name: 'daily', period: 'day' }),
        400,
        'LEAF_INVALID_ARGUMENT',
      );
      expect(day.message).toContain('505/2020');
      expectLeafError(
        await call(app, 'POST', '/admin/gapless', { name: 'c', correctionsOf: 'nope' }),
        404,
        'LEAF_GAPLESS_SERIES_NOT_FOUND',
      );
      for (const bad of [{ name: 'x', width: '6' }, { name: 'x', colour: 'red' }, [1], '"x"']) {
        expectLeafError(
          await call(app, 'POST', '/admin/gapless', bad),
          400,
          'LEAF_INVALID_ARGUMENT',
        );
      }
      const list = json(await call(app, 'GET', '/admin/gapless')) as {
        series: Array<{ name: string }>;
      };
      expect(list.series.map((s) => s.name)).toEqual(['inv', 'inv-r']);
      expect(json(await call(app, 'GET', '/admin/gapless/inv-r'))).toMatchObject({
        correctionsOf: 'inv',
      });
      expectLeafError(
        await call(app, 'GET', '/admin/gapless/nope'),
        404,
        'LEAF_GAPLESS_SERIES_NOT_FOUND',
      );
      expectLeafError(
        await call(app, 'GET', '/admin/gapless', undefined, 'wrong'),
        401,
        'LEAF_UNAUTHORIZED',
      );
    });

    it('reserves, confirms and voids over HTTP: numbers as decimal strings, each call idempotent, the typed refusals', async () => {
      const year = new Date().getUTCFullYear();
      const reserved = await call(app, 'POST', '/api/gapless/inv/reserve', { key: 'order-1' });
      expect(reserved.statusCode).toBe(200);
      const first = json(reserved);
      expect(first).toEqual({
        series: 'inv',
        periodKey: expect.stringMatching(/^20\d\d$/),
        number: '1',
        text: expect.stringMatching(/^INV-20\d\d-000001$/),
        state: 'reserved',
        key: 'order-1',
        reason: null,
        expiresAt: expect.any(Number),
      });
      expect(Math.abs(Number(first.periodKey) - year)).toBeLessThanOrEqual(1);
      expect(json(await call(app, 'POST', '/api/gapless/inv/reserve', { key: 'order-1' }))).toEqual(
        first,
      );
      const second = json(
        await call(app, 'POST', '/api/gapless/inv/reserve', { key: 'order-2', ttlMs: 60_000 }),
      );
      expect(second.number).toBe('2');
      const confirm = { number: '1', key: 'order-1' };
      const confirmed = json(await call(app, 'POST', '/api/gapless/inv/confirm', confirm));
      expect(confirmed).toMatchObject({ number: '1', state: 'confirmed', expiresAt: null });
      expect(json(await call(app, 'POST', '/api/gapless/inv/confirm', confirm))).toEqual(confirmed);
      expect(json(await call(app, 'POST', '/api/gapless/inv/reserve', { key: 'order-1' }))).toEqual(
        confirmed,
      );
      expectLeafError(
        await call(app, 'POST', '/api/gapless/inv/void', { ...confirm, reason: 'typo' }),
        409,
        'LEAF_GAPLESS_SETTLED',
      );
      expectLeafError(
        await call(app, 'POST', '/api/gapless/inv/confirm', { number: '1', key: 'order-2' }),
        409,
        'LEAF_GAPLESS_KEY_MISMATCH',
      );
      expectLeafError(
        await call(app, 'POST', '/api/gapless/inv/confirm', { number: '7', key: 'nobody' }),
        404,
        'LEAF_GAPLESS_NOT_RESERVED',
      );
      const voided = { number: '2', key: 'order-2', reason: 'cancelled' };
      expect(json(await call(app, 'POST', '/api/gapless/inv/void', voided))).toMatchObject({
        state: 'voided',
        reason: 'cancelled',
      });
      const late = json(
        await call(app, 'POST', '/api/gapless/inv/reserve', { key: 'late', ttlMs: 1 }),
      );
      await sleep(50);
      expectLeafError(
        await call(app, 'POST', '/api/gapless/inv/confirm', { number: late.number, key: 'late' }),
        410,
        'LEAF_GAPLESS_RESERVATION_EXPIRED',
      );
      expectLeafError(
        await call(app, 'POST', '/api/gapless/invx/reserve', { key: 'a' }),
        404,
        'LEAF_GAPLESS_SERIES_NOT_FOUND',
      );
    });

    it('refuses hostile input at the door (400), and answers 404 LEAF_MODE_DISABLED without LEAF_GAPLESS', async () => {
      const hostile: Array<[string, unknown]> = [
        ['/api/gapless/inv/reserve', {}],
        ['/api/gapless/inv/reserve', { key: 'a b' }],
        ['/api/gapless/inv/reserve', { key: 'x'.repeat(129) }],
        ['/api/gapless/inv/reserve', { key: 'a', ttlMs: '100' }],
        ['/api/gapless/inv/reserve', { key: 'a', ttlMs: 0 }],
        ['/api/gapless/inv/reserve', { key: 'a', ttlMs: 86_400_001 }],
        ['/api/gapless/inv/reserve', { key: 'a', extra: 1 }],
        ['/api/gapless/inv/reserve', '[1,2]'],
        ['/api/gapless/inv/reserve', '"key"'],
        ['/api/gapless/inv/confirm', { number: 1, key: 'order-1' }],
        ['/api/gapless/inv/confirm', { number: '1e3', key: 'order-1' }],
        ['/api/gapless/inv/confirm', { number: '99999999999999999999', key: 'order-1' }],
        ['/api/gapless/inv/confirm', { number: '-1', key: 'order-1' }],
        ['/api/gapless/inv/void', { number: '2', key: 'order-2' }],
        ['/api/gapless/inv/void', { number: '2', key: 'order-2', reason: ' ' }],
        ['/api/gapless/inv/void', { number: '2', key: 'order-2', reason: 'a\u0000b' }],
        ['/api/gapless/inv/void', { number: '2', key: 'order-2', reason: 'r'.repeat(257) }],
        ['/api/gapless/inv%2520x/reserve', { key: 'a' }],
      ];
      for (const [url, body] of hostile) {
        expect({ url, body, status: (await call(app, 'POST', url, body)).statusCode }).toEqual({
          url,
          body,
          status: 400,
        });
      }
      expectLeafError(
        await call(off, 'POST', '/api/gapless/inv/reserve', { key: 'a' }),
        404,
        'LEAF_MODE_DISABLED',
      );
      expectLeafError(await call(off, 'GET', '/admin/gapless'), 404, 'LEAF_MODE_DISABLED');
    });

    it('needs a client token allowed gapless and the series', async () => {
      const reserve = '/api/gapless/inv/reserve';
      expectLeafError(
        await call(app, 'POST', reserve, { key: 'a' }, 'nobody-0123456789abcdefghij'),
        401,
        'LEAF_UNAUTHORIZED',
      );
      expectLeafError(
        await call(app, 'POST', reserve, { key: 'a' }, ORDERS),
        403,
        'LEAF_FORBIDDEN',
      );
      expectLeafError(
        await call(app, 'POST', '/api/gapless/other/reserve', { key: 'a' }),
        403,
        'LEAF_FORBIDDEN',
      );
    });

    it('serves the remote client: reserve, confirm, void, the typed refusal', async () => {
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const client = new LeafClient({ servers: [url], token: INVOICES });
      try {
        const taken = await client.gapless.reserve('inv', 'remote-1');
        expect(taken).toMatchObject({ series: 'inv', number: 4n, state: 'reserved' });
        expect(await client.gapless.reserve('inv', 'remote-1')).toEqual(taken);
        expect(await client.gapless.confirm('inv', taken.number, 'remote-1')).toMatchObject({
          state: 'confirmed',
        });
        const other = await client.gapless.reserve('inv', 'remote-2');
        await client.gapless.void('inv', other.number, 'remote-2', 'duplicate order');
        await expect(
          client.gapless.confirm('inv', other.number, 'remote-2'),
        ).rejects.toBeInstanceOf(GaplessSettledError);
      } finally {
        await client.close();
      }
    });

    it('verifies through the admin route and the CLI; the CLI exits 4 once a record is tampered with', async () => {
      const report = json(await call(app, 'GET', '/admin/gapless/inv/verify'));
      expect(report).toEqual({
        series: 'inv',
        issued: 5,
        confirmed: 2,
        voided: 3,
        pending: 0,
        missing: [],
        duplicates: [],
        voidsWithoutReason: [],
        unrecorded: [],
        records: 5,
        ok: true,
      });
      const lines = { out: '', err: '' };
      const cli = (...args: string[]) => {
        lines.out = '';
        lines.err = '';
        return runCli(args, {
          env: { LEAF_DB_URL: db.url },
          out: (text) => (lines.out += `${text}\n`),
          err: (text) => (lines.err += `${text}\n`),
        });
      };
      expect(
        await cli(
          'gapless',
          'series',
          'create',
          'ft-a',
          '--prefix',
          'FT A',
          '--period',
          'none',
          '--external-code',
          'JFM7G8KN',
        ),
      ).toBe(0);
      expect(await cli('gapless', 'series', 'create', 'ft-b', '--period', 'day')).toBe(1);
      expect(lines.err).toContain('505/2020');
      expect(await cli('gapless', 'series', 'list', '--json')).toBe(0);
      expect((JSON.parse(lines.out) as Array<{ name: string }>).map((s) => s.name)).toEqual([
        'ft-a',
        'inv',
        'inv-r',
      ]);
      expect(await cli('numbers', 'verify', 'inv')).toBe(0);
      expect(lines.out).toMatch(/issued +5\n/);
      expect(lines.out).toMatch(/result +OK/);
      expect(await cli('numbers', 'verify', 'nope')).toBe(1);
      expect(await cli('numbers', 'verify', 'bad name')).toBe(1);
      await db.query(
        "UPDATE leaf_gapless_record SET reason = 'edited' WHERE series = 'inv' AND seq = 2",
      );
      expect(await cli('numbers', 'verify', 'inv', '--json')).toBe(4);
      expect(JSON.parse(lines.out)).toMatchObject({ ok: false, chainBrokenAt: '2' });
      expect(json(await call(app, 'GET', '/admin/gapless/inv/verify'))).toMatchObject({
        ok: false,
        chainBrokenAt: '2',
      });
    });

    it('counts voids by reason and the age of reservations at settlement', async () => {
      const metrics = (await call(app, 'GET', '/metrics')).body;
      expect(metrics).toContain('leaf_gapless_voids_total{series="inv",reason="cancelled"} 1');
      expect(metrics).toContain('leaf_gapless_voids_total{series="inv",reason="expired"} 1');
      // "duplicate order" is not label-like: folded into `other`.
      expect(metrics).toContain('leaf_gapless_voids_total{series="inv",reason="other"} 1');
      expect(metrics).toMatch(
        /leaf_gapless_reservation_age_seconds_count\{series="inv",outcome="confirmed"\} 2\n/,
      );
      expect((await call(off, 'GET', '/metrics')).body).not.toContain('leaf_gapless');
    });

    it('is ready exactly while the gapless tables answer: 503 from a call that cannot reach them until one that can', async () => {
      const ready = () => call(app, 'GET', '/health/ready/gapless');
      expect((await ready()).statusCode).toBe(200);
      const dataSource = app.get<AppDataSources>(APP_DATA_SOURCES).dataSource!;
      await dataSource.destroy();
      try {
        expect(
          (await call(app, 'POST', '/api/gapless/inv/reserve', { key: 'cut' })).statusCode,
        ).toBe(503);
        const down = await ready();
        expect(down.statusCode).toBe(503);
        expect(down.body).toContain('cannot be reached');
        expect((await call(app, 'GET', '/health/ready')).statusCode).toBe(503);
      } finally {
        await dataSource.initialize();
      }
      expect(
        (await call(app, 'POST', '/api/gapless/inv/reserve', { key: 'back' })).statusCode,
      ).toBe(200);
      expect((await ready()).statusCode).toBe(200);
      expect(json(await call(off, 'GET', '/health/ready/gapless'))).toMatchObject({
        status: 'ok',
        info: { gapless: { status: 'up', enabled: false } },
      });
    });
  });
}
